import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseFile, type ParsedRun } from '../../src/ingest/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { fixture, fixtureBytes, NIGHTLY_DIR } from './helpers.js';

const parse = (name: string) => parseFile(name, fixtureBytes(name));
const only = (name: string): ParsedRun => {
  const f = parse(name);
  assert.equal(f.runs.length, 1);
  return f.runs[0] as ParsedRun;
};
const code = (c: string) => (e: unknown) => isLmBenchError(e) && e.code === c;

describe('ingest formats: vllm bench serve', () => {
  it('reads the legacy key set: "request_goodput:", no failed, stats recomputed from the arrays it always has', () => {
    const f = parse('vllm-serve-legacy.json');
    assert.equal(f.format, 'vllm_bench_serve');
    const { result: r, meta, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.request_goodput, null);
    assert.ok(meta.notes.some((n) => n.includes('request_goodput:')));
    assert.equal(r.failed, 0, 'num_prompts − completed');
    assert.ok(meta.notes.some((n) => n.startsWith('failed derived')));
    assert.equal(r.endpoint_type, 'vllm', 'legacy has no endpoint_type: the backend stands in');
    assert.equal(r.p99_ttft_ms, 397);
    assert.equal(r.p50_ttft_ms, 250, 'p50 = median');
    // e2el is absent (legacy has no latencies array): unavailable, not invented.
    assert.ok(meta.unavailable.includes('mean_e2el_ms'));
    assert.equal(r.mean_e2el_ms, 0);
    assert.ok(!meta.unavailable.includes('p90_itl_ms'), 'ITL p90 recomputed from the itls arrays');
    assert.ok(Math.abs(r.p90_itl_ms - 40) < 1e-9);
    assert.ok(meta.unavailable.includes('max_output_tokens_per_s'));
    assert.equal(hints.model, 'meta-llama/Llama-3.1-8B-Instruct');
    assert.equal(r.lmb.source, 'ingest');
    assert.equal(r.request_rate, 'inf');
  });

  it('reads the late-2025 key set with failed, goodput and the max_* keys', () => {
    const { result: r, meta } = only('vllm-serve-2025.json');
    assert.equal(r.failed, 2);
    assert.equal(r.request_goodput, 7.1);
    assert.equal(r.max_concurrent_requests, 41);
    assert.equal(r.max_concurrency, 64);
    assert.equal(r.request_rate, 8);
    assert.equal(r.p50_tpot_ms, 18, 'p50 from median');
    assert.ok(meta.unavailable.includes('p90_ttft_ms'));
    assert.ok(meta.unavailable.includes('mean_e2el_ms'));
    assert.ok(!meta.unavailable.includes('failed'));
  });

  it('reads the newest key set with a bare Infinity burstiness, p90/p95 and e2el', () => {
    const { result: r, meta } = only('vllm-serve-newest.json');
    assert.equal(r.burstiness, 'inf');
    assert.equal(r.p95_ttft_ms, 65);
    assert.equal(r.p99_e2el_ms, 900);
    assert.equal(r.label, 'h100-chat');
    assert.deepEqual(meta.unavailable.filter((k) => !k.startsWith('lmb.')), []);
  });

  it('reads JSON Lines from --append-result as one run per line', () => {
    const f = parse('vllm-serve-append.jsonl');
    assert.equal(f.format, 'vllm_bench_serve');
    assert.deepEqual(f.runs.map((r) => r.result.request_rate), [2, 4]);
    assert.deepEqual(f.runs.map((r) => r.label), ['line 1', 'line 2']);
  });
});

describe('ingest formats: vllm bench sweep', () => {
  const dir = 'sweep/20260101_120000/SERVE-max_num_seqs=64-enable_prefix_caching=False-BENCH-max_concurrency=16';
  it('takes the serve parameters of each run as its server config', () => {
    const f = parse(`${dir}/run=0.json`);
    assert.equal(f.format, 'vllm_bench_sweep');
    const run = f.runs[0] as ParsedRun;
    assert.deepEqual(run.hints.serverConfig, { max_num_seqs: 64, enable_prefix_caching: false });
    assert.equal(run.result.max_concurrency, 16);
    assert.equal(run.result.p99_e2el_ms, 2900);
  });

  it('reads summary.json as the same runs and skips the warm-up', () => {
    const s = parse(`${dir}/summary.json`);
    assert.equal(s.runs.length, 2);
    assert.throws(() => parse(`${dir}/warmup.json`), (e: unknown) => code('LMB_ERR_INGEST_REJECTED')(e) && /no measured run/.test((e as Error).message));
  });
});

describe('ingest formats: GuideLLM', () => {
  it('v0.3: run_stats totals, worker.backend_model, median for the missing p50, nearest-rank', () => {
    const f = parse('guidellm-v0.3.json');
    assert.equal(f.format, 'guidellm');
    const { result: r, meta, hints } = f.runs[0] as ParsedRun;
    assert.equal(hints.model, 'meta-llama/Llama-3.1-8B-Instruct');
    assert.equal(r.completed, 100);
    assert.equal(r.max_concurrency, 1, 'synchronous');
    assert.equal(r.p50_ttft_ms, 42);
    assert.equal(meta.percentile_method, 'nearest_rank');
    assert.ok(meta.notes.some((n) => n.includes('v0.3')));
  });

  it('v0.5 (metadata version 1): maps inter_token_latency_ms to TPOT, never time_per_output_token_ms; ITL unavailable', () => {
    const f = parse('guidellm-v0.5.json');
    assert.equal(f.runs.length, 3);
    const [thr, constant, poisson] = f.runs as [ParsedRun, ParsedRun, ParsedRun];
    assert.equal(thr.result.mean_tpot_ms, 14.6, 'inter_token_latency_ms.mean');
    assert.notEqual(thr.result.mean_tpot_ms, 14.9, 'not time_per_output_token_ms (includes TTFT)');
    assert.equal(thr.result.p99_tpot_ms, 17.5);
    for (const k of ['mean_itl_ms', 'p99_itl_ms']) assert.ok(thr.meta.unavailable.includes(k), k);
    assert.equal(thr.result.mean_e2el_ms, 1900, 'request_latency s → ms');
    assert.equal(thr.result.p99_e2el_ms, 2600);
    assert.equal(thr.result.failed, 3);
    assert.equal(thr.result.total_output_tokens, 12800);
    assert.equal(thr.result.max_concurrency, 256);
    assert.equal(thr.result.max_concurrent_requests, 8);
    // vLLM's definition, successful / duration (100 / 30 s), not GuideLLM's rate-distribution mean (6).
    const raw = JSON.parse(readFileSync(fixture('guidellm-v0.5.json'), 'utf8')) as { benchmarks: { duration: number; metrics: { requests_per_second: { successful: { mean: number } } } }[] };
    assert.ok(Math.abs(thr.result.request_throughput - thr.result.completed / (raw.benchmarks[0]?.duration ?? NaN)) < 1e-12);
    assert.equal(raw.benchmarks[0]?.metrics.requests_per_second.successful.mean, 6);
    assert.notEqual(thr.result.request_throughput, 6);
    assert.equal(constant.result.request_rate, 2.5);
    assert.equal(constant.result.burstiness, 'inf', 'constant spacing = gamma with infinite shape');
    assert.equal(poisson.result.burstiness, 1);
    assert.equal(thr.result.lmb.start_epoch_ms, 1767225600000);
    assert.ok(thr.meta.notes.some((n) => n.includes('metadata version 1')));
  });

  it('v0.7 (metadata version 2): model from config.spec, stats recomputed from every kept request', () => {
    const { result: r, meta, hints } = only('guidellm-v0.7.json');
    assert.equal(hints.model, 'Qwen/Qwen2.5-7B-Instruct');
    assert.equal(meta.percentile_method, 'linear');
    assert.equal(r.max_concurrency, 4);
    // TTFTs 40..80 ms: linear p99 = 79.6, not the report's nearest-rank 80.
    assert.ok(Math.abs(r.p99_ttft_ms - 79.6) < 1e-9);
    assert.equal(r.mean_tpot_ms, 14);
    assert.ok(Math.abs(r.std_ttft_ms - Math.sqrt(200)) < 1e-9, 'population std');
  });
});

describe('ingest formats: genai-perf, nightly, lm-bench', () => {
  it('genai-perf: inter_token_latency is TPOT; completed from the request_count metric; total throughput derived', () => {
    const f = parse('profile_export_genai_perf.json');
    assert.equal(f.format, 'genai_perf');
    const { result: r, meta, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.mean_tpot_ms, 18.7);
    assert.ok(meta.unavailable.includes('mean_itl_ms'));
    assert.equal(r.p99_ttft_ms, 260);
    assert.equal(r.median_e2el_ms, 2450);
    assert.equal(r.completed, 100);
    assert.equal(r.total_output_tokens, 12800);
    assert.ok(Math.abs(r.total_token_throughput - (409.6 + 3.2 * 550)) < 1e-9);
    assert.equal(r.max_concurrency, 8);
    assert.equal(r.request_rate, 'inf');
    assert.ok(meta.unavailable.includes('failed'));
    assert.equal(hints.model, 'meta-llama/Meta-Llama-3-8B-Instruct');
  });

  it('lm-bench results keep their blocks and source', () => {
    const f = parse('lm-bench-result.json');
    assert.equal(f.format, 'lm_bench');
    const { result: r, hints } = f.runs[0] as ParsedRun;
    assert.equal(r.lmb.source, 'sim');
    const file = JSON.parse(readFileSync(fixture('lm-bench-result.json'), 'utf8')) as { server_config: unknown };
    assert.deepEqual(hints.serverConfig, file.server_config);
    assert.equal(hints.gpuCount, 2);
    assert.equal(hints.workload?.name, 'chat');
  });

  it('reads the real vLLM nightly tables: 15 rows each, TP and QPS from the test name, only means and stds', () => {
    const files = readdirSync(NIGHTLY_DIR).filter((n) => n.endsWith('.json')).sort();
    assert.equal(files.length, 2);
    for (const name of files) {
      const f = parseFile(name, readFileSync(join(NIGHTLY_DIR, name)));
      assert.equal(f.format, 'vllm_nightly');
      assert.equal(f.runs.length, 15);
      const rows = JSON.parse(readFileSync(join(NIGHTLY_DIR, name), 'utf8')) as Record<string, number | string>[];
      for (const [i, run] of f.runs.entries()) {
        const row = rows[i] as Record<string, number | string>;
        assert.equal(run.result.mean_ttft_ms, row['Mean TTFT (ms)']);
        assert.equal(run.result.std_tpot_ms, row['Std TPOT (ms)']);
        assert.equal(run.result.output_throughput, row['Output Tput (tok/s)']);
        assert.ok(Math.abs(run.result.duration * run.result.request_throughput - run.result.completed) < 1e-6);
        assert.ok(run.meta.unavailable.includes('p99_ttft_ms'));
        assert.ok(run.meta.unavailable.includes('mean_itl_ms'));
        assert.equal(run.hints.gpu, 'A100-SXM4-80GB');
        const tp = Number(/_tp(\d+)_/.exec(String(row['Test name']))?.[1]);
        assert.equal(run.hints.serverConfig?.tensor_parallel_size, tp);
        assert.equal(run.hints.gpuCount, tp);
      }
      const models = new Set(f.runs.map((r) => r.hints.model));
      assert.deepEqual([...models].sort(), ['llama-3-70b', 'llama-3-8b', 'mixtral-8x7b']);
      assert.deepEqual(f.runs.slice(0, 5).map((r) => r.result.request_rate), [2, 4, 8, 16, 'inf']);
      assert.equal(f.runs[0]?.result.date.slice(0, 8), name.slice(0, 10).replaceAll('-', ''));
    }
  });
});

describe('ingest formats: broken files', () => {
  const cases: [string, string, RegExp][] = [
    ['broken/truncated.json', 'LMB_ERR_INGEST_REJECTED', /invalid JSON/],
    ['broken/truncated.jsonl', 'LMB_ERR_INGEST_REJECTED', /line 2/],
    ['broken/wrong-types.json', 'LMB_ERR_INGEST_REJECTED', /completed: .*number/],
    ['broken/missing-keys.json', 'LMB_ERR_INGEST_REJECTED', /duration: missing/],
    ['broken/guidellm-missing-ttft.json', 'LMB_ERR_INGEST_REJECTED', /benchmarks\[1\].*time_to_first_token_ms: missing/],
    ['broken/unknown.json', 'LMB_ERR_INGEST_UNKNOWN_FORMAT', /no known key set/],
  ];
  for (const [name, c, re] of cases) {
    it(`${name} → ${c}`, () => {
      assert.throws(() => parse(name), (e: unknown) => code(c)(e) && re.test((e as Error).message));
    });
  }
});
