import { STAT_KEYS, type BenchmarkResult, type StudySpec } from '../../src/domain/index.js';
import type { NewRun } from '../../src/store/index.js';

/** A small valid BenchmarkResult; `over` replaces fields. */
export function sampleResult(over: Partial<BenchmarkResult> = {}): BenchmarkResult {
  const stats = Object.fromEntries(STAT_KEYS.map((k, i) => [k, 10 + i])) as Record<(typeof STAT_KEYS)[number], number>;
  return {
    ...stats,
    duration: 60,
    completed: 100,
    failed: 0,
    total_input_tokens: 25_600,
    total_output_tokens: 12_800,
    request_throughput: 1.66,
    request_goodput: null,
    output_throughput: 213.3,
    total_token_throughput: 640,
    max_output_tokens_per_s: 400,
    max_concurrent_requests: 16,
    date: '20250101-000000',
    endpoint_type: 'openai',
    backend: 'vllm',
    label: null,
    model_id: 'meta-llama/Llama-3.1-8B-Instruct',
    tokenizer_id: null,
    num_prompts: 100,
    request_rate: 'inf',
    burstiness: 1,
    max_concurrency: 16,
    server_config: null,
    hardware: null,
    model: null,
    workload: null,
    slo: null,
    server_metrics: null,
    steady_state: null,
    lmb: {
      version: '0.1.0',
      source: 'ingest',
      start_epoch_ms: 0,
      errors_by_kind: {},
      token_source_counts: {},
      mean_client_queue_ms: 0,
      p99_client_queue_ms: 0,
      max_loop_lag_ms: null,
      rejected: 0,
      startup_time_s: null,
    },
    ...over,
  };
}

export function sampleSpec(name = 'study-a', over: Partial<StudySpec> = {}): StudySpec {
  return {
    name,
    space: 'search-spaces/vllm.yaml',
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload: {
      name: 'chat',
      api: 'chat',
      input_len: { dist: 'fixed', value: 256 },
      output_len: { dist: 'fixed', value: 128 },
      arrival: { kind: 'closed', concurrency: 16 },
      num_prompts: 100,
      ignore_eos: true,
    },
    slo: { ttft_p99_ms: 350 },
    objectives: [{ name: 'output_throughput_per_gpu', direction: 'maximize' }],
    target: 'sim',
    seed: 1,
    budget_trials: 10,
    budget_hours: null,
    parallel: 1,
    ...over,
  };
}

export function sampleRun(hash: string, over: Partial<NewRun> = {}): NewRun {
  return {
    result: sampleResult(),
    serverConfig: { max_num_seqs: 128, enable_prefix_caching: true },
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload: null,
    sourceFormat: 'vllm_bench_serve',
    sourcePath: `/tmp/${hash}.json`,
    contentHash: hash,
    ...over,
  };
}

/** A clock the test moves by hand. */
export function manualClock(startMs = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
