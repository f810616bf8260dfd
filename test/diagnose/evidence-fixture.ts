import type { BenchmarkResult, ServerEvidence } from '../../src/domain/index.js';
import { simulate } from '../../src/sim/index.js';

/**
 * The diagnosis tests' ground: a real (simulated) result whose latency fields each case then sets to
 * what it needs, and server evidence built by hand, one field overridden at a time.
 */
export const base: BenchmarkResult = (() => {
  const out = simulate({
    config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', seed: 1,
    workload: { name: 'base', api: 'completions', input_len: { dist: 'fixed', value: 512 }, output_len: { dist: 'fixed', value: 65 }, arrival: { kind: 'closed', concurrency: 4 }, num_prompts: 20, ignore_eos: true },
  });
  if (!out.ok) throw new Error('the base run did not start');
  return { ...out.result, mean_ttft_ms: 100, p99_ttft_ms: 150, mean_e2el_ms: 1000, p99_e2el_ms: 1200, mean_itl_ms: 10, median_itl_ms: 10, p99_itl_ms: 20, lmb: { ...out.result.lmb, mean_client_queue_ms: 0 } };
})();

export const server = (over: Partial<ServerEvidence> = {}): ServerEvidence => ({
  source: 'metrics', engine: 'vllm', samples: 20, running_mean: 10, running_peak: 16, waiting_mean: 0, waiting_peak: 0, waiting_share: 0, capped_share: 0,
  running_limit: 16, running_limit_known: true, kv_usage_mean: 0.2, kv_usage_peak: 0.3, kv_full_share: 0, preemptions: 0,
  queue_ms_mean: 5, prefill_ms_mean: 40, decode_ms_mean: 640, step_tokens_mean: 100, ...over,
});
