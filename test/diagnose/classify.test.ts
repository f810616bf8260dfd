import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Diagnosis, type BenchmarkResult, type ClientEvidence, type RunEvidence, type ServerEvidence } from '../../src/domain/index.js';
import { diagnose, prefillSteps, withDiagnosis, type DiagnoseInput } from '../../src/diagnose/classify.js';
import { diagnosisLines, knobText } from '../../src/diagnose/text.js';
import { base, server } from './evidence-fixture.js';

// The decision rules on evidence built by hand, one rule at a time, on a real (simulated) result
// whose latency fields are then set to what each case needs.
const client = (over: Partial<ClientEvidence> = {}): ClientEvidence => ({ loop_lag_p99_ms: 2, loop_lag_max_ms: 5, late_send_share: 0, cpu_share: 0.3, threads: 1, backlog_growth: null, backlog_arrivals: null, ...over });

function run(over: { result?: Partial<BenchmarkResult>; server?: Partial<ServerEvidence> | null; client?: Partial<ClientEvidence>; slo?: DiagnoseInput['slo']; known?: DiagnoseInput['known']; metrics?: RunEvidence['metrics'] } = {}): Diagnosis {
  const d = diagnose({
    result: { ...base, ...over.result },
    evidence: { server: over.server === null ? null : server(over.server), client: client(over.client), metrics: over.metrics ?? 'vllm' },
    known: over.known ?? { max_num_seqs: 16 },
    slo: over.slo === undefined ? { ttft_p99_ms: 120 } : over.slo,
    source: 'measured',
  });
  return Diagnosis.parse(d);
}

test('the client comes first: a lagging load generator hides whatever the server did', () => {
  const d = run({ client: { loop_lag_p99_ms: 80 }, server: { preemptions: 12 } });
  assert.equal(d.bottleneck, 'client');
  assert.equal(d.knobs.length, 0);
  assert.equal(run({ client: { late_send_share: 0.2 } }).bottleneck, 'client');
  assert.notEqual(run({ client: { late_send_share: 0.04, loop_lag_p99_ms: 49 } }).bottleneck, 'client');
});

test('no miss and no standing queue is no bottleneck; a standing queue is saturation even within the SLOs', () => {
  const ok = run({ slo: { ttft_p99_ms: 500 } });
  assert.equal(ok.bottleneck, 'none');
  assert.equal(ok.saturated, false);
  const full = run({ slo: { ttft_p99_ms: 500 }, server: { waiting_share: 0.8, capped_share: 0.8, queue_ms_mean: 60 } });
  assert.equal(full.saturated, true);
  assert.equal(full.bottleneck, 'admission');
  assert.equal(run({ slo: { ttft_p99_ms: 500 }, server: { waiting_share: 0.8, capped_share: 0 } }).bottleneck, 'prefill', 'waiting below the limit: the budget admits them');
  // An open loop whose client queue grew (requests held at the client's cap) did not keep up either.
  assert.equal(run({ slo: { ttft_p99_ms: 500 }, result: { request_rate: 20, lmb: { ...base.lmb, mean_client_queue_ms: 400 } } }).saturated, true);
});

test('KV-cache-bound on any preemption, or a cache at ≥ 95% for a quarter of the run', () => {
  assert.equal(run({ server: { preemptions: 3, waiting_share: 0.6, capped_share: 0.6, queue_ms_mean: 90 } }).bottleneck, 'kv_cache');
  assert.equal(run({ server: { kv_full_share: 0.3 } }).bottleneck, 'kv_cache');
  assert.notEqual(run({ server: { kv_full_share: 0.2 } }).bottleneck, 'kv_cache');
});

test('a TTFT miss: queueing at the limit is admission, queueing under it or long prefills are prefill', () => {
  assert.equal(run({ server: { waiting_share: 0.7, capped_share: 0.6, queue_ms_mean: 90, prefill_ms_mean: 20 } }).bottleneck, 'admission');
  assert.equal(run({ server: { waiting_share: 0.7, capped_share: 0.1, queue_ms_mean: 90, prefill_ms_mean: 20 } }).bottleneck, 'prefill');
  assert.equal(run({ server: { waiting_share: 0.7, capped_share: 0.7, queue_ms_mean: 20, prefill_ms_mean: 90 } }).bottleneck, 'prefill', 'prefill time dominates');
});

test('with max_num_seqs unknown, a running plateau is the budget’s when prefills span several steps', () => {
  const plateau = { waiting_share: 0.7, capped_share: 0.7, running_limit: 2, running_limit_known: false, queue_ms_mean: 90, prefill_ms_mean: 60 };
  // 64 output tokens over 640 ms of decode: 10 ms a step, so a 60 ms prefill spans 6 steps.
  assert.equal(prefillSteps(server(plateau), base), 6);
  assert.equal(run({ known: {}, server: plateau }).bottleneck, 'prefill');
  assert.equal(run({ known: {}, server: { ...plateau, prefill_ms_mean: 15 } }).bottleneck, 'admission');
});

test('ITL and TPOT misses are decode; E2EL goes to the side its time went to; two misses name both', () => {
  const d = run({ slo: { itl_p99_ms: 15 }, server: { running_mean: 200 } });
  assert.equal(d.bottleneck, 'decode');
  assert.deepEqual(d.missed, ['itl_p99_ms']);
  assert.equal(run({ slo: { tpot_p99_ms: 5 } }).bottleneck, 'decode');
  // 100 ms to the first token of a 1,000 ms request: an E2EL miss is the decode's.
  assert.equal(run({ slo: { e2el_p99_ms: 800 } }).bottleneck, 'decode');
  assert.equal(run({ slo: { e2el_p99_ms: 800 }, result: { mean_ttft_ms: 700 } }).bottleneck, 'prefill');
  // TTFT 150/120 = 1.25× over, ITL 20/10 = 2× over: decode first, prefill also.
  const both = run({ slo: { ttft_p99_ms: 120, itl_p99_ms: 10 } });
  assert.equal(both.bottleneck, 'decode');
  assert.equal(both.also, 'prefill');
  const ttftWorse = run({ slo: { ttft_p99_ms: 50, itl_p99_ms: 19 } });
  assert.equal(ttftWorse.bottleneck, 'prefill');
  assert.equal(ttftWorse.also, 'decode');
});

test('the evidence carries the missed values with their limits, and the summary quotes the deciding numbers', () => {
  const d = run({ server: { waiting_share: 0.7, capped_share: 0.6, waiting_mean: 12, queue_ms_mean: 90, prefill_ms_mean: 20 } });
  const miss = d.evidence.find((e) => e.name === 'ttft_p99_ms');
  assert.deepEqual(miss, { name: 'ttft_p99_ms', value: 150, unit: 'ms', limit: 120 });
  assert.match(d.summary, /^admission-bound/);
  assert.match(d.summary, /running \(max_num_seqs × replicas\) 16/);
  assert.match(d.summary, /missed ttft_p99_ms/);
  const lines = diagnosisLines(d);
  assert.match(lines[0] ?? '', /^why: admission-bound/);
  assert.equal(lines[1], `  try: ${knobText(d.knobs[0] as Diagnosis['knobs'][number])} (${d.knobs[0]?.why})`);
  assert.deepEqual(diagnosisLines(run({ slo: { ttft_p99_ms: 500 } })), [], 'nothing to say for a healthy run');
});

test('advice skips what the configuration already has and reads the numbers it has', () => {
  const kv = run({ server: { preemptions: 4, running_mean: 40 }, known: { max_num_seqs: 64, gpu_memory_utilization: 0.95, kv_cache_dtype: 'fp8', tensor_parallel_size: 2 } });
  assert.deepEqual(kv.knobs.map((k) => [k.knob, k.change, k.to]), [['max_num_seqs', 'lower', 30], ['tensor_parallel_size', 'raise', 4]]);
  const kv2 = run({ server: { preemptions: 4 }, known: { gpu_memory_utilization: 0.85 } });
  assert.deepEqual(kv2.knobs.slice(0, 2).map((k) => [k.knob, k.change, k.to]), [['gpu_memory_utilization', 'raise', 0.9], ['kv_cache_dtype', 'set', 'fp8']]);
  const decode = run({ slo: { itl_p99_ms: 15 }, result: { median_itl_ms: 5, p99_itl_ms: 20 }, server: { running_mean: 100 }, known: { enforce_eager: true, quantization: 'fp8' } });
  assert.deepEqual(decode.knobs.map((k) => `${k.knob}:${k.change}:${String(k.to)}`), ['max_num_seqs:lower:60', 'tensor_parallel_size:raise:null', 'enforce_eager:set:false', 'max_num_batched_tokens:lower:2048']);
});

test('without scraped evidence the result’s server_metrics peaks still speak; with none at all the summary says so', () => {
  const withPeaks = diagnose({ result: { ...base, server_metrics: { ...(base.server_metrics as NonNullable<BenchmarkResult['server_metrics']>), num_preemptions: 5 } }, evidence: null, known: {}, slo: { ttft_p99_ms: 120 }, source: 'measured' });
  assert.equal(withPeaks.bottleneck, 'kv_cache');
  const blind = diagnose({ result: { ...base, server_metrics: null }, evidence: null, known: {}, slo: { itl_p99_ms: 15 }, source: 'measured' });
  assert.equal(blind.bottleneck, 'decode');
  assert.match(blind.summary, /no server metrics: inferred from the client’s timings/);
});

test('withDiagnosis keeps a run’s own diagnosis and gives one to a result without (a harness’s)', () => {
  const own = { ...base, diagnosis: run({ server: { preemptions: 2 } }) };
  assert.equal(withDiagnosis(own, {}, { ttft_p99_ms: 120 }), own);
  const bare: BenchmarkResult = { ...base, lmb: { ...base.lmb, source: 'loadgen' } };
  delete (bare as { diagnosis?: unknown }).diagnosis;
  delete (bare as { evidence?: unknown }).evidence;
  const given = withDiagnosis(bare, { max_num_seqs: 16 }, { ttft_p99_ms: 500 });
  assert.equal(given.diagnosis?.bottleneck, 'none');
  assert.equal(given.diagnosis?.source, 'measured');
});

test('failed requests are a finding of their own: counted, quoted, and never "no bottleneck: the server kept up"', () => {
  const lost = { ...base, completed: 22, failed: 18, lmb: { ...base.lmb, error_samples: [{ status: null, message: 'the server closed the connection before answering', count: 18 }] } };
  const d = run({ result: lost, slo: null });
  assert.deepEqual(d.failures, { count: 18, of: 40, first_errors: ['18× the server closed the connection before answering'] });
  assert.doesNotMatch(d.summary, /no bottleneck|kept up/);
  assert.match(d.summary, /^18 of 40 requests failed \(18× the server closed the connection before answering\)/);
  assert.ok(diagnosisLines(d).length > 0, 'the terminal shows it');
  assert.equal(run({ slo: null }).failures, null);
  // Some lost, the rest fast: the head says what the answered ones did, and nothing says the SLOs held.
  const some = run({ result: { ...lost, completed: 2, failed: 2 }, slo: { ttft_p99_ms: 500 } });
  assert.doesNotMatch(some.summary, /met its SLOs/);
  assert.match(some.summary, /of those it answered, none missed an SLO \(not met: 2 of 4 requests were lost/);
  // Every request failed: nothing was answered, so nothing "met its SLOs".
  const all = run({ result: { ...base, completed: 0, failed: 12, lmb: { ...base.lmb, error_samples: [{ status: 404, message: 'The model `x` does not exist.', count: 12 }] } }, slo: { ttft_p99_ms: 500 } });
  assert.match(all.summary, /^12 of 12 requests failed \(12× .*\); the server answered no request \(no request completed, so no SLO could be judged/);
  assert.doesNotMatch(all.summary, /met its SLOs|none missed an SLO/);
});

test('an open loop whose requests in flight kept growing is saturated, whatever the server exports', () => {
  // 8× capacity: over the second half of the sending, 100 arrived and the backlog grew by 85.
  const d = run({ server: null, metrics: 'unrecognised', slo: { ttft_p99_ms: 500 }, result: { request_rate: 8 }, client: { backlog_growth: 85, backlog_arrivals: 100 } });
  assert.equal(d.saturated, true);
  // Poisson noise around a steady count is not.
  assert.equal(run({ slo: { ttft_p99_ms: 500 }, result: { request_rate: 8 }, client: { backlog_growth: 4, backlog_arrivals: 100 } }).saturated, false);
});

test('advice speaks the server’s language: llama.cpp’s flags for llama.cpp, nothing of vLLM’s for a server no one reads', () => {
  // llama-server: 4 slots busy, requests deferred for most of the run.
  const llama = run({ metrics: 'llamacpp', known: {}, server: { engine: 'llamacpp', running_limit_known: false, running_peak: 4, running_limit: 4, running_mean: 4, waiting_share: 0.9, capped_share: 0.9, waiting_mean: 12, queue_ms_mean: null, prefill_ms_mean: null, decode_ms_mean: null, kv_usage_mean: null, kv_usage_peak: null, kv_full_share: null, preemptions: null } });
  assert.equal(llama.bottleneck, 'admission');
  assert.deepEqual(llama.knobs, []);
  assert.match(llama.hints[0] ?? '', /--parallel/);
  assert.ok(diagnosisLines(llama).some((l) => l.includes('try: raise --parallel')));
  const blind = run({ server: null, metrics: 'unrecognised', result: { server_metrics: null } });
  assert.notEqual(blind.bottleneck, 'none');
  assert.deepEqual(blind.knobs, []);
  assert.match(blind.summary, /none of the series lm-bench reads/);
});
