import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseFile, type ParsedRun } from '../../src/ingest/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { fixture, fixtureBytes } from './helpers.js';

// Every format on files other tools wrote (test/fixtures/ingest/<format>/README.md names each source).
// Expected figures are the literals in the fixture files, checked by hand against them: a parser that
// reads the asked-for value, the wrong metric or the wrong unit fails here.

const parse = (name: string) => parseFile(name, fixtureBytes(name));
const runsOf = (name: string): ParsedRun[] => parse(name).runs;
const only = (name: string): ParsedRun => {
  const runs = runsOf(name);
  assert.equal(runs.length, 1, name);
  return runs[0] as ParsedRun;
};
const close = (actual: number, expected: number, rel = 1e-12, what = '') => assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * rel, `${what} ${actual} ≉ ${expected}`);
const unavailable = (r: ParsedRun, key: string) => r.meta.unavailable.includes(key);
const json = (name: string): Record<string, unknown> => JSON.parse(readFileSync(fixture(name), 'utf8')) as Record<string, unknown>;
const rejects = (name: string, bytes: Uint8Array | string, code: string, re: RegExp) =>
  assert.throws(
    () => parseFile(name, typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes),
    (e: unknown) => isLmBenchError(e) && e.code === code && re.test(e.message),
  );

describe('real files: NVIDIA AIPerf', () => {
  it('0.1.1 (`records` wrapper): counts, duration and tokens as measured, not as asked; TTFT from the `ttft` tag', () => {
    const f = parse('aiperf/v0.1.1-records/profile_export_aiperf.json');
    assert.equal(f.format, 'aiperf', 'not genai-perf: the counts and totals genai-perf lacks are read');
    const { result: r, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.completed, 89, 'request_count.avg (input_config asked for 100)');
    assert.equal(r.failed, 11, 'error_request_count.avg (the cancelled requests)');
    assert.equal(r.duration, 9.317788951);
    assert.equal(r.total_input_tokens, 48950);
    assert.equal(r.total_output_tokens, 21624, 'total_osl (reasoning included, as output_token_throughput), not total_output_tokens 1832');
    assert.equal(r.request_throughput, 9.551622221540914);
    assert.equal(r.output_throughput, 2320.7222350404572);
    assert.equal(r.mean_ttft_ms, 2343.219436988764);
    assert.equal(r.p99_ttft_ms, 3833.3894000399996);
    assert.equal(r.median_ttft_ms, 2369.317693);
    close(r.std_ttft_ms, 1049.8164554204095 * Math.sqrt(88 / 89), 1e-12, 'sample → population std over 89');
    assert.equal(r.mean_tpot_ms, 27.763065454471807, 'inter_token_latency is per-request TPOT');
    assert.equal(r.mean_itl_ms, 27.755153106189347, 'inter_chunk_latency is the pooled ITL');
    assert.equal(r.max_concurrency, 100);
    assert.equal(r.request_rate, 'inf');
    assert.equal(hints.model, 'openai/gpt-oss-20b');
    assert.equal(r.date, '20251003-131339');
  });

  it('schema 1.0 (0.8.0): failures from error_request_count, phases for concurrency, model from models.items', () => {
    const { result: r, hints, meta } = only('aiperf/v0.8.0-schema1.0/profile_export_aiperf.json');
    assert.equal(r.completed, 481414);
    assert.equal(r.failed, 18586);
    assert.equal(r.duration, 141.58332399600002);
    assert.equal(r.total_input_tokens, 61620992);
    assert.equal(r.total_output_tokens, 48622814);
    assert.equal(r.total_token_throughput, 778649.6522931937);
    assert.equal(r.mean_ttft_ms, 11205.91161602855);
    assert.equal(r.mean_e2el_ms, 17785.016842910754);
    assert.equal(r.p90_itl_ms, 0, 'a measured zero stays a measurement');
    assert.ok(!meta.unavailable.includes('p90_itl_ms'));
    assert.equal(r.max_concurrency, 100000);
    assert.equal(hints.model, 'mock');
  });

  it('schema 1.3 (0.10.0): an empty error_summary is zero failures; the warm-up phase is not the measured one', () => {
    const { result: r, hints, meta } = only('aiperf/v0.10.0-schema1.3/profile_export_aiperf.json');
    assert.equal(r.completed, 96);
    assert.equal(r.failed, 0);
    assert.ok(!meta.unavailable.includes('failed'));
    assert.equal(r.duration, 44.52261098);
    assert.equal(r.total_input_tokens, 361086);
    assert.equal(r.total_output_tokens, 52187);
    assert.equal(r.mean_ttft_ms, 230.13715230208334);
    close(r.std_tpot_ms, 1.252702628778229 * Math.sqrt(95 / 96), 1e-12, 'count 96 from the block');
    close(r.std_itl_ms, 17.043629925667997 * Math.sqrt(52022 / 52023), 1e-12, 'count of the pooled chunks');
    assert.equal(r.max_concurrency, 16);
    assert.equal(hints.model, 'qwen3.6-nvfp4');
    assert.equal(r.energy, undefined, 'telemetry_data with no GPU endpoints: no energy invented');
  });

  it('the CSV exports: the same figures, as AIPerf rounds them; the GPU telemetry table is not a metric', () => {
    for (const [csv, jsonName] of [
      ['aiperf/v0.1.1-records/profile_export_aiperf.csv', 'aiperf/v0.1.1-records/profile_export_aiperf.json'],
      ['aiperf/v0.8.0-schema1.0/profile_export_aiperf.csv', 'aiperf/v0.8.0-schema1.0/profile_export_aiperf.json'],
      ['aiperf/v0.10.0-schema1.3/profile_export_aiperf.csv', 'aiperf/v0.10.0-schema1.3/profile_export_aiperf.json'],
    ] as const) {
      const f = parse(csv);
      assert.equal(f.format, 'aiperf', csv);
      const c = (f.runs[0] as ParsedRun).result;
      const j = only(jsonName).result;
      assert.equal(c.completed, j.completed, csv);
      assert.equal(c.total_input_tokens, j.total_input_tokens, csv);
      for (const k of ['duration', 'request_throughput', 'output_throughput', 'mean_ttft_ms', 'p99_ttft_ms', 'mean_tpot_ms', 'mean_e2el_ms'] as const) close(c[k], j[k], 0.01, `${csv} ${k}`);
    }
    const v01 = only('aiperf/v0.1.1-records/profile_export_aiperf.csv');
    assert.equal(v01.result.mean_ttft_ms, 2343.22, 'the CSV literal');
    assert.equal(v01.result.failed, 11);
    assert.ok(unavailable(only('aiperf/v0.10.0-schema1.3/profile_export_aiperf.csv'), 'failed'), 'no Error Request Count row: unavailable, not 0');
  });
});

describe('real files: genai-perf', () => {
  it('flat input_config: completed is the request_count metric (66), never input_config.request_count (100)', () => {
    const name = 'genai-perf/constructed/flat_profile_export_genai_perf.json';
    const doc = json(name) as { input_config: { request_count: number }; request_count: { avg: number } };
    assert.deepEqual([doc.input_config.request_count, doc.request_count.avg], [100, 66]);
    const f = parse(name);
    assert.equal(f.format, 'genai_perf');
    const { result: r, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.completed, 66);
    close(r.duration, 66 / 2.2, 1e-12, 'completed / request_throughput');
    assert.equal(r.total_input_tokens, 36300, '66 × 550');
    assert.equal(r.total_output_tokens, Math.round(66 * 256.5));
    assert.equal(r.max_concurrency, 8);
    assert.equal(hints.model, 'meta-llama/Meta-Llama-3-8B-Instruct');
  });

  it('nested input_config (0.0.15+): completed, tokens and duration read, not stored as 0', () => {
    const f = parse('genai-perf/constructed/nested_profile_export_genai_perf.json');
    const { result: r, hints, meta } = f.runs[0] as ParsedRun;
    assert.equal(r.completed, 35);
    assert.equal(r.total_input_tokens, 35 * 128);
    assert.equal(r.total_output_tokens, 35 * 200);
    close(r.duration, 30, 1e-12);
    for (const k of ['completed', 'duration', 'total_input_tokens', 'total_output_tokens']) assert.ok(!meta.unavailable.includes(k), k);
    assert.equal(r.max_concurrency, 4, 'perf_analyzer.stimulus.concurrency');
    assert.equal(r.endpoint_type, 'chat');
    assert.equal(hints.model, 'Qwen/Qwen2.5-7B-Instruct');
  });

  it('a real file from before the request_count metric: the count is unavailable, the rest is read', () => {
    const run = only('genai-perf/issue-298/profile_export_genai_perf.json');
    const r = run.result;
    for (const k of ['completed', 'duration', 'total_input_tokens', 'total_output_tokens', 'failed']) assert.ok(unavailable(run, k), k);
    assert.equal(r.request_throughput, 17.222547659562533);
    assert.equal(r.output_throughput, 44190.56002502682);
    assert.equal(r.mean_ttft_ms, 184.63779366666665);
    assert.equal(r.p99_ttft_ms, 425.02943662);
    assert.equal(r.mean_tpot_ms, 2.1767344516666665);
    assert.equal(r.median_e2el_ms, 5778.654798);
    assert.ok(unavailable(run, 'mean_itl_ms'), 'genai-perf exports no pooled ITL');
    assert.equal(r.max_concurrency, 100);
    assert.equal(run.hints.model, 'ensemble');
  });

  it('the CSV of genai-perf\'s own exporter test: "Request Count (count)", thousands separators in the GPU table', () => {
    const f = parse('genai-perf/csv-exporter-test/profile_export_genai_perf.csv');
    assert.equal(f.format, 'genai_perf');
    const { result: r } = f.runs[0] as ParsedRun;
    assert.equal(r.completed, 3);
    assert.equal(r.request_throughput, 123);
    assert.equal(r.output_throughput, 456);
    assert.equal(r.mean_ttft_ms, 8);
    assert.equal(r.p99_ttft_ms, 8.98);
    assert.equal(r.p90_ttft_ms, 8.8);
    assert.equal(r.mean_tpot_ms, 11);
    assert.equal(r.mean_e2el_ms, 5);
    assert.equal(r.total_input_tokens, 18, '3 × mean ISL 6');
  });
});

describe('real files: GuideLLM', () => {
  it('request_throughput is successful / duration (46 / 29.997 s), not the rate-distribution mean', () => {
    const name = 'guidellm/v0.4-from-file/benchmarks_stripped.json';
    const { result: r } = only(name);
    const mean = 1.5481806532737452; // metrics.requests_per_second.successful.mean in the file
    assert.equal(r.completed, 46);
    assert.equal(r.duration, 29.997201442718506);
    close(r.request_throughput, 46 / 29.997201442718506, 1e-12);
    assert.ok(Math.abs(r.request_throughput - mean) / mean > 0.009, 'the distribution mean is 1% off');
    assert.equal(r.total_input_tokens, 11827);
    assert.equal(r.total_output_tokens, 5888);
    close(r.output_throughput, 5888 / 29.997201442718506, 1e-12);
    assert.equal(r.mean_ttft_ms, 16.792535781860348);
    assert.equal(r.max_concurrency, 1, 'synchronous');
  });

  it('the YAML output of the same report reads to the same runs', () => {
    const a = only('guidellm/v0.4-from-file/benchmarks_stripped.json');
    const b = only('guidellm/v0.4-from-file/benchmarks_stripped.yaml');
    assert.deepEqual(b.result, a.result);
    assert.deepEqual(b.meta, a.meta);
  });

  it('0.8.0.dev18 (metadata version 2): two constant-rate benchmarks, model from config.spec.backend', () => {
    const runs = runsOf('guidellm/v0.8.0.dev18/guidellm_report_v2.json');
    assert.equal(runs.length, 2);
    assert.deepEqual(runs.map((r) => r.result.request_rate), [2, 4]);
    assert.deepEqual(runs.map((r) => r.result.completed), [2, 2]);
    close((runs[0] as ParsedRun).result.request_throughput, 2 / 5.01964807510376, 1e-12);
    assert.equal((runs[0] as ParsedRun).result.total_input_tokens, 143);
    assert.equal((runs[0] as ParsedRun).hints.model, 'e2e-mock-model');
  });

  it('the CSV (three header rows) reads to the figures of the JSON it was written from', () => {
    const f = parse('guidellm/v0.8.0.dev18-csv/benchmarks.csv');
    assert.equal(f.format, 'guidellm');
    const fromJson = runsOf('guidellm/v0.8.0.dev18/guidellm_report_v2.json');
    assert.equal(f.runs.length, 2);
    for (const [i, run] of f.runs.entries()) {
      const j = (fromJson[i] as ParsedRun).result;
      for (const k of ['completed', 'failed', 'total_input_tokens', 'total_output_tokens'] as const) assert.equal(run.result[k], j[k], k);
      for (const k of ['duration', 'request_throughput', 'output_throughput', 'mean_ttft_ms', 'p99_ttft_ms', 'mean_tpot_ms', 'mean_e2el_ms', 'std_ttft_ms'] as const) close(run.result[k], j[k], 1e-9, k);
      assert.equal(run.hints.model, 'e2e-mock-model');
    }
  });
});

describe('real files: vLLM tables and results', () => {
  it('the 2025 performance table: "# of req." rows read, TP and QPS from the test name (was "Successful req.: missing")', () => {
    const name = 'vllm-perf-table/01_tp8_pp1/benchmark_results.json';
    const f = parse(name);
    assert.equal(f.format, 'vllm_nightly');
    const rows = JSON.parse(readFileSync(fixture(name), 'utf8')) as Record<string, number | string>[];
    assert.equal(f.runs.length, 4);
    for (const [i, run] of f.runs.entries()) {
      const row = rows[i] as Record<string, number | string>;
      assert.equal(run.result.completed, row['# of req.']);
      assert.equal(run.result.request_throughput, row['Tput (req/s)']);
      assert.equal(run.result.output_throughput, row['Output Tput (tok/s)']);
      assert.equal(run.result.total_token_throughput, row['Total Tput (tok/s)']);
      assert.equal(run.result.mean_ttft_ms, row['Mean TTFT (ms)']);
      assert.equal(run.result.p99_tpot_ms, row['P99 TPOT (ms)']);
      assert.equal(run.result.median_itl_ms, row['Median ITL (ms)']);
      assert.deepEqual(run.hints.serverConfig, { tensor_parallel_size: 8 });
      assert.equal(run.hints.gpuCount, 8);
      assert.ok(unavailable(run, 'total_input_tokens') && unavailable(run, 'failed') && unavailable(run, 'std_ttft_ms'));
    }
    assert.deepEqual(f.runs.map((r) => r.result.request_rate), [1, 4, 16, 'inf']);
    // The console line of the same run printed "Benchmark duration (s): 205.22".
    close((f.runs[0] as ParsedRun).result.duration, 205.22, 1e-4);
  });

  it('a table run with pipeline parallelism is refused: lm-bench has no PP knob', () => {
    rejects('benchmark_results.json', fixtureBytes('vllm-perf-table/02_tp4_pp2_no_IB/benchmark_results.json'), 'LMB_ERR_INGEST_REJECTED', /rows\[0\].*tp4_pp2_no_IB_qps_01.*pipeline parallel 2/);
  });

  it('a 2025 bench serve result (legacy "request_goodput:" key) reads as written', () => {
    const { result: r, hints } = only('vllm-2025/benchmark_2025-05-13_04-55-27.json');
    assert.equal(r.completed, 200);
    assert.equal(r.duration, 57.42171942605637);
    assert.equal(r.mean_ttft_ms, 243.57119981985306);
    assert.equal(r.burstiness, 100);
    assert.equal(r.request_rate, 3.6);
    assert.equal(hints.model, 'meta-llama/Llama-3.1-8B-Instruct');
  });

  it('a run whose requests all failed: latency statistics unavailable, not 0 ms', () => {
    const run = only('vllm-2025/all-failed.json');
    assert.equal(run.result.completed, 0);
    assert.equal(run.result.failed, 4);
    for (const k of ['mean_ttft_ms', 'p99_ttft_ms', 'mean_tpot_ms', 'mean_itl_ms', 'mean_e2el_ms']) assert.ok(unavailable(run, k), k);
    assert.ok(!unavailable(run, 'failed') && !unavailable(run, 'output_throughput'), 'the counts and the zero throughput are measured');
  });
});

describe('real files: SGLang bench_serving', () => {
  it('2024 key set: one run per line, request throughput = completed / duration, median TTFT only', () => {
    const f = parse('sglang/llama_3_3_70b_output_online.jsonl');
    assert.equal(f.format, 'sglang', 'not rejected with a vLLM message');
    assert.equal(f.runs.length, 5);
    assert.deepEqual(f.runs.map((r) => r.result.request_rate), [1, 2, 4, 8, 16]);
    const r = (f.runs[0] as ParsedRun).result;
    assert.equal(r.completed, 300);
    assert.equal(r.duration, 298.36731477989815);
    close(r.request_throughput, 300 / 298.36731477989815, 1e-12);
    assert.equal(r.output_throughput, 537.4147638064377);
    assert.equal(r.median_ttft_ms, 82.87082647439092);
    assert.equal(r.mean_e2el_ms, 7811.2642198785525);
    assert.equal(r.median_itl_ms, 13.637926895171404);
    assert.ok(unavailable(f.runs[0] as ParsedRun, 'mean_ttft_ms') && unavailable(f.runs[0] as ParsedRun, 'failed'));
  });

  it('a bare Infinity request rate (offline runs)', () => {
    const f = parse('sglang/llama_3_3_70b_offline_output.jsonl');
    assert.deepEqual(f.runs.map((r) => r.result.request_rate), ['inf', 'inf', 'inf']);
    assert.equal((f.runs[0] as ParsedRun).result.completed, 3000);
  });

  it('2025+ key set (a line of the file above with the keys bench_serving added later)', () => {
    const line = JSON.parse(readFileSync(fixture('sglang/llama_3_3_70b_output_online.jsonl'), 'utf8').split('\n')[0] ?? '{}') as Record<string, unknown>;
    const newer = { ...line, request_throughput: 1.0055, input_throughput: 511.5, mean_ttft_ms: 90.5, std_ttft_ms: 10.25, p99_ttft_ms: 140.75, mean_tpot_ms: 7.5, mean_itl_ms: 7.25, p99_itl_ms: 30.5, p99_e2e_latency_ms: 9000.5 };
    const r = (parseFile('x.jsonl', new TextEncoder().encode(`${JSON.stringify(newer)}\n`)).runs[0] as ParsedRun).result;
    assert.equal(r.request_throughput, 1.0055, 'the written request throughput wins');
    assert.equal(r.mean_ttft_ms, 90.5);
    assert.equal(r.std_ttft_ms, 10.25);
    assert.equal(r.p99_e2el_ms, 9000.5);
    close(r.total_token_throughput, 511.5 + 537.4147638064377, 1e-12);
  });
});

describe('real files: inference-perf', () => {
  it('a stage report: seconds → ms, duration from successes / requests_per_sec, token totals from the rates', () => {
    const f = parse('inference-perf/kubecon-na-2025-batch_size/stage_0_lifecycle_metrics.json');
    assert.equal(f.format, 'inference_perf');
    const run = f.runs[0] as ParsedRun;
    const r = run.result;
    assert.equal(r.completed, 60);
    assert.equal(r.failed, 0);
    close(r.duration, 60 / 0.996850670841712, 1e-12);
    assert.equal(r.request_throughput, 0.996850670841712);
    close(r.mean_ttft_ms, 0.03331898592878133 * 1000, 1e-12);
    close(r.p99_ttft_ms, 0.04251505806925707 * 1000, 1e-12);
    close(r.mean_tpot_ms, 0.0034775777890777705 * 1000, 1e-12, 'time_per_output_token');
    close(r.mean_itl_ms, 0.003477577789077771 * 1000, 1e-12, 'inter_token_latency');
    close(r.mean_e2el_ms, 0.48322820343310013 * 1000, 1e-12);
    assert.equal(r.total_input_tokens, Math.round((200.05131546008423 * 60) / 0.996850670841712));
    assert.equal(r.request_rate, 1);
    assert.ok(unavailable(run, 'std_ttft_ms'));
  });

  it('the summary report and the YAML one with benchmark_time_seconds', () => {
    assert.equal(only('inference-perf/kubecon-na-2025-batch_size/summary_lifecycle_metrics.json').result.completed, 47002);
    const y = only('inference-perf/llm-d-yaml/inference_perf_lifecycle.yaml');
    assert.equal(y.result.duration, 2.48);
    assert.equal(y.result.completed, 3);
    close(y.result.request_throughput, 3 / 2.48, 1e-9);
  });
});

describe('real files: llm-d Benchmark Report v0.2', () => {
  it('YAML: completed = total − failures, units converted, knobs from the engine args, replicas as data parallelism', () => {
    const f = parse('llm-d-br/br_v0_2_example.yaml');
    assert.equal(f.format, 'llm_d_br');
    const { result: r, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.completed, 500);
    assert.equal(r.failed, 0);
    assert.equal(r.request_throughput, 2262.448);
    close(r.mean_ttft_ms, 0.0368578234128654 * 1000, 1e-12, 'units s → ms');
    close(r.p99_ttft_ms, 0.05029489721637218 * 1000, 1e-12);
    assert.equal(r.request_rate, 10);
    assert.deepEqual(hints.serverConfig, { block_size: 1024, max_model_len: 1024, tensor_parallel_size: 8, data_parallel_size: 2 });
    assert.equal(hints.gpuCount, 16, '8 accelerators per replica × 2 replicas');
    assert.equal(hints.gpu, 'NVIDIA-H100-80GB-HBM3');
    assert.equal(hints.model, 'Qwen/Qwen3-0.6B');
    assert.ok(f.warnings.some((w) => /2 engine replicas .* data_parallel_size 2/.test(w)));
  });

  it('the JSON form and v0.2.1 read alike', () => {
    const y = only('llm-d-br/br_v0_2_example.yaml');
    assert.deepEqual(only('llm-d-br/br_v0_2_example.json').result, y.result);
    assert.equal(only('llm-d-br/br_v0_2_1_example.yaml').result.completed, 500);
  });

  it('refuses what one vLLM server config cannot express, and other report versions', () => {
    const doc = JSON.parse(readFileSync(fixture('llm-d-br/br_v0_2_example.json'), 'utf8')) as { version: string; scenario: { stack: { standardized: Record<string, unknown> }[] } };
    const engine = doc.scenario.stack[0] as { standardized: Record<string, unknown> };
    const pd = { ...doc, scenario: { ...doc.scenario, stack: [{ ...engine, standardized: { ...engine.standardized, role: 'prefill' } }, engine] } };
    rejects('pd.json', JSON.stringify(pd), 'LMB_ERR_INGEST_REJECTED', /2 inference engines \(roles prefill, decode\)/);
    rejects('v01.json', JSON.stringify({ ...doc, version: '0.1' }), 'LMB_ERR_INGEST_REJECTED', /version "0\.1"/);
    const noFailures = JSON.parse(JSON.stringify(doc)) as { results: { request_performance: { aggregate: { requests: Record<string, unknown> } } } };
    delete noFailures.results.request_performance.aggregate.requests['failures'];
    const run = parseFile('nf.json', new TextEncoder().encode(JSON.stringify(noFailures))).runs[0] as ParsedRun;
    assert.ok(unavailable(run, 'completed') && unavailable(run, 'failed'), 'total sent without a failure count: completed unknown, not assumed');
    // No request count at all (optional in the schema; lm-bench's export of an ML.ENERGY or SGLang run
    // writes none): the throughput and latencies it states are stored, the counts unavailable.
    const noRequests = JSON.parse(JSON.stringify(doc)) as { results: { request_performance: { aggregate: Record<string, unknown> } } };
    delete noRequests.results.request_performance.aggregate['requests'];
    const bare = parseFile('nr.json', new TextEncoder().encode(JSON.stringify(noRequests))).runs[0] as ParsedRun;
    assert.ok(unavailable(bare, 'completed') && unavailable(bare, 'failed'));
    assert.equal(bare.result.request_throughput, 2262.448);
    close(bare.result.mean_ttft_ms, 0.0368578234128654 * 1000, 1e-12);
  });
});

describe('real files: ML.ENERGY leaderboard records', () => {
  it('one run per configuration: output throughput, ITL percentiles, power and J/token as stated; nothing else invented', () => {
    const f = parse('mlenergy/meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json');
    assert.equal(f.format, 'mlenergy');
    assert.equal(f.runs.length, 2);
    const [a, b] = f.runs as [ParsedRun, ParsedRun];
    assert.equal(a.result.output_throughput, 7036.531577937304);
    assert.equal(a.result.median_itl_ms, 16.482017002999783);
    assert.equal(a.result.p99_itl_ms, 46.433303505182266);
    assert.deepEqual(a.result.energy, {
      source: 'ingest',
      gpus: 1,
      window: null,
      avg_power_w: 669.2439022030471,
      energy_j: null,
      energy_per_output_token_j: 0.09510991243206074,
      output_tokens_per_joule: 1 / 0.09510991243206074,
      unavailable_reason: null,
    });
    for (const k of ['completed', 'duration', 'mean_ttft_ms', 'mean_itl_ms', 'request_throughput']) assert.ok(unavailable(a, k), k);
    assert.deepEqual(a.hints.serverConfig, { max_num_seqs: 128, tensor_parallel_size: 1 });
    assert.deepEqual(b.hints.serverConfig, { max_num_seqs: 16, tensor_parallel_size: 1 });
    assert.equal(a.hints.model, 'meta-llama/Llama-3.1-8B-Instruct');
    assert.deepEqual([a.hints.gpu, a.hints.gpuCount], ['H100', 1]);
  });
});

describe('AIPerf files that are not per-run exports', () => {
  it('a multi-run aggregate ({mean, ci_low, …} blocks, no avg) is refused rather than stored empty', () => {
    const aggregate = { schema_version: '1.0', aiperf_version: '0.8.0', request_latency: { unit: 'ms', mean: 500, std: 5, ci_low: 490, ci_high: 510 }, request_count: { unit: 'requests', mean: 100 } };
    rejects('profile_export_aiperf_aggregate.json', JSON.stringify(aggregate), 'LMB_ERR_INGEST_REJECTED', /not a per-run AIPerf profile export/);
  });
});
