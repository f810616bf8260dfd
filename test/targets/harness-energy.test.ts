import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeHarnessResult } from '../../src/targets/harness-result.js';
import type { TrialInput } from '../../src/targets/types.js';

// A command-target harness that measured power writes lm-bench's `energy` block: it is kept as written; a
// block that does not fit the schema is left out and the trial keeps its measurement.
const input = { workload: { num_prompts: 10 }, config: {}, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'm', slo: {} } as unknown as TrialInput;
const harness = { output_throughput: 100, p99_ttft_ms: 10, p99_tpot_ms: 2, p99_itl_ms: 2, p99_e2el_ms: 50, completed: 10 };
const energy = { source: 'nvidia-smi', gpus: 1, window: { start_s: 0.5, end_s: 10.5, rule: 'load' }, avg_power_w: 400, energy_j: 4000, energy_per_output_token_j: 0.5, output_tokens_per_joule: 2, unavailable_reason: null } as const;

test("a harness's energy block is kept; a malformed one is left out, the measurement kept", () => {
  assert.deepEqual(normalizeHarnessResult({ ...harness, energy }, input).energy, energy);
  const bad = normalizeHarnessResult({ ...harness, energy: { avg_power_w: 'lots' } }, input);
  assert.equal(bad.energy, undefined);
  assert.equal(bad.output_throughput, 100);
  assert.equal(normalizeHarnessResult(harness, input).energy, undefined);
});
