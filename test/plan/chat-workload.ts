import type { Workload } from '../../src/domain/index.js';

/** The plan tests' chat workload: lognormal prompts and answers, Poisson arrivals (each test sets its rate). */
export const CHAT: Workload = {
  name: 'chat',
  api: 'chat',
  input_len: { dist: 'lognormal', mean: 256, std: 256, min: 4, max: 1024 },
  output_len: { dist: 'lognormal', mean: 200, std: 160, min: 4, max: 1024 },
  arrival: { kind: 'poisson', rate_rps: 1 },
  num_prompts: 200,
  ignore_eos: true,
};
