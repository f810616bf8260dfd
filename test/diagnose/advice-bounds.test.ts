import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Diagnosis, type BenchmarkResult, type ServerConfig, type ServerEvidence, type Slo } from '../../src/domain/index.js';
import { diagnose } from '../../src/diagnose/classify.js';
import { diagnosisLines } from '../../src/diagnose/text.js';
import { base, server } from './evidence-fixture.js';

// Advice that would change nothing or make things worse: a "raise" to the value in force, a "lower"
// to a value above it, a knob vLLM would refuse at the value named. Evidence built by hand on a real
// (simulated) result, as in classify.test.ts.

function run(o: { server?: Partial<ServerEvidence>; known: ServerConfig; slo?: Slo | null; result?: Partial<BenchmarkResult> }): Diagnosis {
  return Diagnosis.parse(diagnose({ result: { ...base, ...o.result }, evidence: { server: server(o.server), client: null, metrics: 'vllm' }, known: o.known, slo: o.slo === undefined ? { ttft_p99_ms: 120 } : o.slo, source: 'measured' }));
}
const knob = (d: Diagnosis, name: string): Diagnosis['knobs'][number] | undefined => d.knobs.find((k) => k.knob === name);

test('admission at max_num_seqs 1024 (the H100 default): no "raise max_num_seqs to 1024", another replica instead', () => {
  const d = run({ known: { max_num_seqs: 1024 }, server: { running_limit: 1024, running_mean: 983, running_peak: 1024, waiting_share: 0.86, capped_share: 0.76, queue_ms_mean: 36_000, prefill_ms_mean: 220, kv_usage_mean: 0.77 } });
  assert.equal(d.bottleneck, 'admission');
  const seqs = knob(d, 'max_num_seqs');
  assert.ok(seqs === undefined || (typeof seqs.to === 'number' && seqs.to > 1024), `advice that changes nothing: ${JSON.stringify(seqs)}`);
  assert.ok(knob(d, 'data_parallel_size') !== undefined);
  // Under the top it still doubles (KV cache mostly free).
  assert.equal(knob(run({ known: { max_num_seqs: 128 }, server: { running_limit: 128, running_mean: 126, waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: 20 } }), 'max_num_seqs')?.to, 256);
});

test('max_num_seqs is per replica: a plateau over two replicas is not one replica’s limit', () => {
  // 2 replicas, max_num_seqs not given: 256 running together is 128 each, so try 256 (not 512).
  const d = run({ known: { data_parallel_size: 2 }, server: { running_limit_known: false, running_limit: 256, running_peak: 256, running_mean: 250, waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: 5 } });
  assert.equal(d.bottleneck, 'admission');
  assert.equal(knob(d, 'max_num_seqs')?.to, 256);
  // KV-bound over 4 replicas of max_num_seqs 64: 200 running in all is 50 each; "lower to 150" would raise it.
  const kv = run({ known: { max_num_seqs: 64, data_parallel_size: 4 }, server: { preemptions: 40, running_mean: 200, running_limit: 256 } });
  assert.equal(kv.bottleneck, 'kv_cache');
  const lower = knob(kv, 'max_num_seqs');
  assert.equal(lower?.change, 'lower');
  assert.equal(lower?.to, 37);
  // Decode-bound over 2 replicas of 128: 240 running is 120 each, so 72, under 128.
  const dec = run({ slo: { itl_p99_ms: 15 }, known: { max_num_seqs: 128, data_parallel_size: 2 }, server: { running_mean: 240, running_limit: 256 } });
  assert.equal(dec.bottleneck, 'decode');
  assert.equal(knob(dec, 'max_num_seqs')?.to, 72);
});

test('decode-bound with a batch of under one request: lowering max_num_seqs is not advised', () => {
  // An ITL miss at 0.36 requests running: steps are as short as they get at this batch.
  const d = run({ slo: { itl_p99_ms: 5 }, known: { max_num_seqs: 4 }, server: { running_mean: 0.36, running_peak: 2 } });
  assert.equal(d.bottleneck, 'decode');
  assert.equal(knob(d, 'max_num_seqs'), undefined);
  assert.equal(knob(d, 'tensor_parallel_size')?.change, 'raise');
});

test('an ITL tail is not met by "lower max_num_batched_tokens to 2048" when the budget is already under it, nor without chunked prefill', () => {
  const tail = { median_itl_ms: 5, p99_itl_ms: 20 };
  const small = run({ slo: { itl_p99_ms: 15 }, result: tail, known: { max_num_batched_tokens: 1024, max_num_seqs: 16 } });
  assert.equal(small.bottleneck, 'decode');
  assert.equal(knob(small, 'max_num_batched_tokens'), undefined, JSON.stringify(small.knobs));
  assert.equal(knob(run({ slo: { itl_p99_ms: 15 }, result: tail, known: { max_num_batched_tokens: 8192 } }), 'max_num_batched_tokens')?.to, 2048);
  // vLLM refuses a budget under max_num_seqs: with 4096 sequences the budget goes no lower than that.
  assert.equal(knob(run({ slo: { itl_p99_ms: 15 }, result: tail, known: { max_num_batched_tokens: 16384, max_num_seqs: 4096 } }), 'max_num_batched_tokens')?.to, 4096);
  // Chunked prefill off: whole prompts stall the decodes; vLLM refuses a budget under max_model_len.
  const whole = run({ slo: { itl_p99_ms: 15 }, result: tail, known: { enable_chunked_prefill: false, max_num_batched_tokens: 9000, max_model_len: 9000 } });
  assert.equal(knob(whole, 'max_num_batched_tokens'), undefined);
  assert.deepEqual(knob(whole, 'enable_chunked_prefill')?.to, true);
});

test('the prefill advice says what a larger budget does for prompts that already fit one step', () => {
  // 5,000-token prompts under an 8,192-token budget: each fits one step, one per step.
  const d = run({ known: { max_num_batched_tokens: 8192 }, result: { total_input_tokens: 5000 * base.completed }, server: { waiting_share: 0.7, capped_share: 0, queue_ms_mean: 90, prefill_ms_mean: 300 } });
  assert.equal(d.bottleneck, 'prefill');
  const mbt = knob(d, 'max_num_batched_tokens');
  assert.equal(mbt?.to, 16384);
  assert.doesNotMatch(mbt?.why ?? '', /takes 1 step/);
  assert.match(mbt?.why ?? '', /fits one step of the 8192-token budget/);
  // Sliced prompts keep the step count.
  const sliced = run({ known: { max_num_batched_tokens: 512 }, result: { total_input_tokens: 16000 * base.completed }, server: { waiting_share: 0.7, capped_share: 0, queue_ms_mean: 90, prefill_ms_mean: 700 } });
  assert.match(knob(sliced, 'max_num_batched_tokens')?.why ?? '', /takes 32 steps of the 512-token budget/);
});

test('a run given no SLO is not said to have met or held its SLOs', () => {
  const ok = run({ slo: null, known: {} });
  assert.equal(ok.bottleneck, 'none');
  assert.doesNotMatch(ok.summary, /SLOs held|met its SLOs/);
  assert.match(ok.summary, /no SLO given/);
  const sat = run({ slo: null, known: { max_num_seqs: 16 }, server: { waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: 20 } });
  assert.equal(sat.bottleneck, 'admission');
  assert.doesNotMatch(sat.summary, /within its SLOs/);
  const failed = run({ slo: null, known: {}, result: { failed: 3, lmb: { ...base.lmb, mean_client_queue_ms: 0, error_samples: [{ status: 500, message: 'boom', count: 3 }] } } });
  assert.doesNotMatch(failed.summary, /none missed an SLO/);
  assert.ok(diagnosisLines(failed).length > 0);
  // Nothing completed (and nothing failed): no SLO was met.
  const empty = run({ known: {}, result: { completed: 0, total_input_tokens: 0, total_output_tokens: 0, mean_ttft_ms: 0, p99_ttft_ms: 0, mean_e2el_ms: 0, p99_e2el_ms: 0 } });
  assert.doesNotMatch(empty.summary, /met its SLOs/);
});

test('a client lagging 60 ms does not hide a TTFT miss of seconds: the miss is the server’s, with its advice', () => {
  const lagging = { loop_lag_p99_ms: 60, loop_lag_max_ms: 90, late_send_share: 0, cpu_share: 0.1, threads: 1, backlog_growth: null, backlog_arrivals: null };
  const queued = server({ waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 2000, prefill_ms_mean: 20 });
  const miss = (p99TtftMs: number): Diagnosis =>
    Diagnosis.parse(diagnose({ result: { ...base, p99_ttft_ms: p99TtftMs }, evidence: { server: queued, client: lagging, metrics: 'vllm' }, known: { max_num_seqs: 16 }, slo: { ttft_p99_ms: 30 }, source: 'measured' }));
  const far = miss(3000);
  assert.equal(far.bottleneck, 'admission', far.summary);
  assert.equal(far.knobs[0]?.knob, 'max_num_seqs');
  assert.match(far.summary, /the client lagged too \(loop lag p99 60 ms\)/, 'the lag is still told');
  // 80 ms over a 30 ms limit with 60 ms of lag: the client's lag can account for it.
  assert.equal(miss(80).bottleneck, 'client');
  // Late sends are the client's whatever was missed.
  const late = diagnose({ result: { ...base, p99_ttft_ms: 3000 }, evidence: { server: queued, client: { ...lagging, loop_lag_p99_ms: 2, late_send_share: 0.3 }, metrics: 'vllm' }, known: {}, slo: { ttft_p99_ms: 30 }, source: 'measured' });
  assert.equal(late.bottleneck, 'client');
});

test('a full KV cache with no preemption is not told to lower max_num_seqs "so fewer are preempted"', () => {
  // vLLM admits no more than the cache holds: full a third of the run, 790 running of 1024, none preempted.
  const held = run({ known: { max_num_seqs: 1024, gpu_memory_utilization: 0.9 }, server: { preemptions: 0, kv_full_share: 0.33, kv_usage_peak: 0.97, running_mean: 790, running_limit: 1024 } });
  assert.equal(held.bottleneck, 'kv_cache');
  assert.equal(knob(held, 'max_num_seqs'), undefined, JSON.stringify(held.knobs));
  assert.equal(knob(held, 'gpu_memory_utilization')?.to, 0.95);
  // Preempting: a smaller batch is the cure.
  assert.equal(knob(run({ known: { max_num_seqs: 1024 }, server: { preemptions: 12, running_mean: 790, running_limit: 1024 } }), 'max_num_seqs')?.to, 592);
});

test('raising max_num_seqs stops where the KV cache would fill, not at 1.5× whatever the cache holds', () => {
  // 60 running of 64 fill 85% of the cache: 67 fill 95%; 96 (1.5×) would need 136% and preempt.
  const d = run({ known: { max_num_seqs: 64 }, server: { running_limit: 64, running_mean: 60, running_peak: 64, waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: 20, kv_usage_mean: 0.85, kv_usage_peak: 0.93, kv_full_share: 0 } });
  assert.equal(d.bottleneck, 'admission');
  assert.equal(knob(d, 'max_num_seqs')?.to, 67);
  // A cache already at 95% of what it holds: no larger batch to offer, another replica instead.
  const full = run({ known: { max_num_seqs: 64 }, server: { running_limit: 64, running_mean: 62, waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: 20, kv_usage_mean: 0.94, kv_full_share: 0.1 } });
  assert.equal(knob(full, 'max_num_seqs'), undefined);
  assert.equal(knob(full, 'data_parallel_size')?.change, 'raise');
});

test('an SLO of per-request thresholds only is not "no SLO given", nor "met"', () => {
  const d = run({ known: {}, slo: { request: { ttft_ms: 50 } } });
  assert.doesNotMatch(d.summary, /met its SLOs|no SLO given/);
  assert.match(d.summary, /no percentile SLO to judge/);
});

test('TGI: requests queued behind a full batch are not told to raise --max-concurrent-requests (that limit refuses, it does not queue)', () => {
  const d = Diagnosis.parse(diagnose({
    result: base,
    evidence: { server: server({ engine: 'tgi', running_limit_known: false, running_limit: 8, running_peak: 8, running_mean: 8, waiting_share: 0.9, capped_share: 0.9, queue_ms_mean: 900, prefill_ms_mean: null, decode_ms_mean: null, kv_usage_mean: null, kv_usage_peak: null, kv_full_share: null, preemptions: null }), client: null, metrics: 'tgi' },
    known: {}, slo: { ttft_p99_ms: 120 }, source: 'measured',
  }));
  assert.equal(d.bottleneck, 'admission');
  assert.deepEqual(d.knobs, []);
  assert.ok(d.hints.length > 0);
  assert.ok(d.hints.every((h) => !h.includes('--max-concurrent-requests')), d.hints.join('; '));
  assert.match(d.hints[0] ?? '', /--max-batch-size/);
});

test('one-token answers: a plateau the token budget makes is prefill, not "raise max_num_seqs to 2"', () => {
  // Measured on `sim serve --max-num-batched-tokens 2048` (max_num_seqs 1024) at 60 req/s of 6,000-token
  // prompts answering 1 token, nothing given with --set: one request running, 2,044 tokens a step.
  const oneToken = { total_input_tokens: 6000 * base.completed, total_output_tokens: base.completed, server_metrics: { ...(base.server_metrics as NonNullable<BenchmarkResult['server_metrics']>), prefix_cache_hit_rate: 0 } };
  const plateau = { running_limit_known: false, running_limit: 1, running_peak: 1, running_mean: 0.8, waiting_share: 0.8, capped_share: 0.8, waiting_mean: 20, queue_ms_mean: 510, prefill_ms_mean: 28, decode_ms_mean: 0, step_tokens_mean: 2044, kv_usage_mean: 0.004 };
  const d = run({ known: {}, result: oneToken, server: plateau });
  assert.equal(d.bottleneck, 'prefill', d.summary);
  assert.equal(knob(d, 'max_num_seqs'), undefined);
  assert.equal(knob(d, 'max_num_batched_tokens')?.change, 'raise');
  // 200-token prompts, 4 running, 800 tokens a step: all four prefill in one step, so the plateau is max_num_seqs's.
  const short = run({ known: {}, result: { ...oneToken, total_input_tokens: 200 * base.completed }, server: { ...plateau, running_limit: 4, running_peak: 4, running_mean: 4, step_tokens_mean: 800, prefill_ms_mean: 5, queue_ms_mean: 400 } });
  assert.equal(short.bottleneck, 'admission', short.summary);
  // 200-token prompts at 2,000 req/s: ten a step (2,000 tokens), each done in the step that prefills it,
  // so the gauge saw one running at most; a step holds more prompts than that plateau, and is full.
  const many = run({ known: {}, result: { ...oneToken, total_input_tokens: 200 * base.completed }, server: { ...plateau, running_mean: 0.6, waiting_share: 0.6, capped_share: 0.6, step_tokens_mean: 2000, prefill_ms_mean: 7, queue_ms_mean: 467 } });
  assert.equal(many.bottleneck, 'prefill', many.summary);
  assert.equal(knob(many, 'max_num_seqs'), undefined);
  // Four a step of 800 tokens under a 2,048-token (or larger) budget: the steps are not full, so a cap holds them.
  assert.equal(run({ known: {}, result: { ...oneToken, total_input_tokens: 200 * base.completed }, server: { ...plateau, running_mean: 0.6, step_tokens_mean: 800, prefill_ms_mean: 7, queue_ms_mean: 467 } }).bottleneck, 'admission');
  // `sim serve --max-num-seqs 4`, 200-token prompts answering one token: the gauge saw none running
  // (each finishes in its step), the steps held four prompts (795 tokens). With max_num_seqs given, or
  // not, that is the cap, and the advice doubles the four.
  const four = { ...plateau, running_mean: 0, running_peak: 0, running_limit: 0, capped_share: 0, waiting_share: 0.6, step_tokens_mean: 795, prefill_ms_mean: 3, queue_ms_mean: 574 };
  const capKnown = run({ known: { max_num_seqs: 4 }, result: { ...oneToken, total_input_tokens: 200 * base.completed }, server: { ...four, running_limit: 4, running_limit_known: true } });
  assert.equal(capKnown.bottleneck, 'admission', capKnown.summary);
  assert.doesNotMatch(capKnown.summary, /time at the limit with requests waiting 0%/, 'no figure that contradicts the verdict');
  assert.match(capKnown.summary, /prompts per engine step 3\.98/);
  assert.equal(knob(capKnown, 'max_num_seqs')?.to, 8);
  const capUnknown = run({ known: {}, result: { ...oneToken, total_input_tokens: 200 * base.completed }, server: four });
  assert.equal(capUnknown.bottleneck, 'admission', capUnknown.summary);
  assert.doesNotMatch(capUnknown.summary, /running \(plateau\) 0/, 'no plateau the gauge could not see');
  assert.equal(knob(capUnknown, 'max_num_seqs')?.to, 8);
  // Prompts the prefix cache serves take no step: 90% cached 6,000-token prompts fit one.
  const cached = run({ known: {}, result: { ...oneToken, server_metrics: { ...oneToken.server_metrics, prefix_cache_hit_rate: 0.9 } }, server: { ...plateau, running_mean: 1, step_tokens_mean: 700, prefill_ms_mean: 5 } });
  assert.equal(cached.bottleneck, 'admission', cached.summary);
});

test('max_num_seqs 1 is not told to go lower', () => {
  const kv = run({ known: { max_num_seqs: 1 }, server: { preemptions: 3, running_mean: 1, running_limit: 1 } });
  assert.equal(kv.bottleneck, 'kv_cache');
  assert.equal(knob(kv, 'max_num_seqs'), undefined, JSON.stringify(kv.knobs));
  const dec = run({ slo: { itl_p99_ms: 15 }, known: { max_num_seqs: 1 }, server: { running_mean: null, running_limit: 1 } });
  assert.equal(dec.bottleneck, 'decode');
  assert.equal(knob(dec, 'max_num_seqs'), undefined, JSON.stringify(dec.knobs));
});
