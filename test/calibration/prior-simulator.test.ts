import { test } from 'node:test';
import assert from 'node:assert/strict';
import { longerToDecide, PRIOR_DECIDE_MAX_PROMPTS } from '../../src/calibration/prior-simulator.js';
import type { BenchmarkResult, Workload } from '../../src/domain/index.js';

const base: Workload = {
  name: 'w',
  api: 'completions',
  input_len: { dist: 'fixed', value: 100 },
  output_len: { dist: 'fixed', value: 100 },
  arrival: { kind: 'poisson', rate_rps: 10 },
  num_prompts: 400,
  ignore_eos: true,
};
const withSaturation = (saturation: Partial<NonNullable<BenchmarkResult['saturation']>>): BenchmarkResult =>
  ({ saturation: { saturated: false, offered_rps: 10, sustained_rps: 8, backlog_growth_rps: 0, window_start_s: 0, window_end_s: 1, ...saturation } }) as unknown as BenchmarkResult;
const undecided = withSaturation({ undecided: true });

test('only an undecided run of a steady open-loop load is run again, with twice the requests, up to the cap', () => {
  assert.equal(longerToDecide(base, undecided)?.num_prompts, 800);
  assert.equal(longerToDecide({ ...base, arrival: { kind: 'gamma', rate_rps: 10, burstiness: 0.5 } }, undecided)?.num_prompts, 800);
  assert.equal(longerToDecide({ ...base, arrival: { kind: 'constant', rate_rps: 10 } }, undecided)?.num_prompts, 800);
  // Decided runs, either way, stand.
  assert.equal(longerToDecide(base, withSaturation({})), null);
  assert.equal(longerToDecide(base, withSaturation({ saturated: true })), null);
  // Past the cap the run stays undecided (and its pick is doubted).
  assert.equal(longerToDecide({ ...base, num_prompts: PRIOR_DECIDE_MAX_PROMPTS / 2 }, undecided)?.num_prompts, PRIOR_DECIDE_MAX_PROMPTS);
  assert.equal(longerToDecide({ ...base, num_prompts: PRIOR_DECIDE_MAX_PROMPTS / 2 + 1 }, undecided), null);
});

test("loads a longer run cannot decide are left: closed loops, bursts, rate stages and a trace's own requests", () => {
  assert.equal(longerToDecide({ ...base, arrival: { kind: 'closed', concurrency: 8 } }, undecided), null);
  assert.equal(longerToDecide({ ...base, arrival: { kind: 'burst' } }, undecided), null);
  assert.equal(longerToDecide({ ...base, arrival: { kind: 'poisson', rate_rps: 10, stages: [{ rate_rps: 10, duration_s: 40 }] } }, undecided), null);
  const trace = { format: 'jsonl', path: 't.jsonl', requests: 2, data: { arrival_ms: [0, 1], input_tokens: [1, 1], output_tokens: [1, 1] } } as unknown as Workload['trace'];
  assert.equal(longerToDecide({ ...base, trace }, undecided), null);
});
