/**
 * A small closed-loop chat workload (32 users, 160 requests, loose SLOs) for tests that run whole
 * studies on the simulator: short enough that a few trials take seconds.
 */
export const SMALL_CHAT_WORKLOAD_YAML = [
  'name: small-chat',
  'api: completions',
  'input_len: { dist: lognormal, mean: 256, std: 128, min: 16, max: 1024 }',
  'output_len: { dist: lognormal, mean: 96, std: 48, min: 8, max: 256 }',
  'arrival: { kind: closed, concurrency: 32 }',
  'num_prompts: 160',
  'slo: { ttft_p99_ms: 2000, itl_p99_ms: 100 }',
].join('\n');
