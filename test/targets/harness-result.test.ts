import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeHarnessResult } from '../../src/targets/harness-result.js';
import { tooManyLost } from '../../src/tune/lost-requests.js';
import type { TrialInput } from '../../src/targets/types.js';
import { isLmBenchError } from '../../src/errors.js';

// A command-target harness's result file: a figure it wrote wrong is refused naming the field, never
// stored as a measurement (the trial then fails with the message as its reason).
const input: TrialInput = {
  trial_id: 3,
  study: 's',
  seed: 1,
  config: {},
  workload: { name: 'w', api: 'completions', input_len: { dist: 'fixed', value: 100 }, output_len: { dist: 'fixed', value: 1000 }, arrival: { kind: 'closed', concurrency: 64 }, num_prompts: 600, ignore_eos: true },
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  slo: {},
};
const good = { output_throughput: 4000, p99_ttft_ms: 300, p99_tpot_ms: 20, p99_itl_ms: 25, p99_e2el_ms: 9000 };

function refused(raw: unknown, re: RegExp): void {
  assert.throws(
    () => normalizeHarnessResult(raw, input),
    (err: unknown) => isLmBenchError(err, 'LMB_ERR_COMMAND_FAILED') && re.test(err.message),
    JSON.stringify(raw),
  );
}

test('a figure written as a string, "inf" or "NaN" is refused naming it, not stored as 0', () => {
  refused({ ...good, output_throughput: 'inf' }, /output_throughput: inf is not a measurement/);
  refused({ ...good, p99_ttft_ms: 'NaN' }, /p99_ttft_ms: NaN is not a measurement/);
  refused({ ...good, p99_ttft_ms: '300' }, /p99_ttft_ms: "300" is not a number/);
  refused({ ...good, mean_itl_ms: true }, /mean_itl_ms: true is not a number/);
});

test('negative figures are refused, in a whole lm-bench result as in a harness\'s own', () => {
  refused({ ...good, p99_itl_ms: -1 }, /p99_itl_ms: -1 is negative/);
  const whole = normalizeHarnessResult(good, input);
  // A whole BenchmarkResult takes the schema's path, which lets any number through.
  assert.deepEqual(normalizeHarnessResult(whole, input), whole);
  refused({ ...whole, p99_ttft_ms: -5 }, /p99_ttft_ms: -5 is negative/);
  refused({ ...whole, output_throughput: -4000 }, /output_throughput: -4000 is negative/);
});

test('latencies in the wrong unit, or figures that contradict each other, are refused naming the field', () => {
  // Seconds under vLLM's _ms keys (vLLM's per-request lists are seconds).
  refused({ output_throughput: 4000, p99_ttft_ms: 0.3, p99_tpot_ms: 0.02, p99_itl_ms: 0.025, p99_e2el_ms: 0.9 }, /p99_e2el_ms 0\.9 is under 1 ms.*seconds/);
  // Nanoseconds: a request cannot outlast the run.
  refused({ ...good, p99_e2el_ms: 9e9, duration: 150 }, /p99_e2el_ms 9000000000 ms is longer than the whole run \(duration 150 s\)/);
  // TTFT in seconds, E2EL in ms: fine alone, but E2EL must contain TTFT (and vice versa here).
  refused({ ...good, p99_ttft_ms: 12_000 }, /p99_e2el_ms 9000 is below p99_ttft_ms 12000/);
  refused({ ...good, p50_itl_ms: 40 }, /p50_itl_ms 40 is above p99_itl_ms 25/);
  refused({ ...good, p99_ttft_ms: 0 }, /p99_ttft_ms is 0 while output_throughput is 4000/);
  refused({ ...good, output_throughput: 0 }, /output_throughput is 0 while p99_ttft_ms is 300/);
  // A duration in ms: the throughput no longer matches the tokens over it.
  refused({ ...good, total_output_tokens: 600_000, duration: 150_000 }, /output_throughput 4000 \/s does not match total_output_tokens 600000 over duration 150000 s/);
  // The same figures, consistent, are a measurement.
  const ok = normalizeHarnessResult({ ...good, p50_itl_ms: 20, total_output_tokens: 600_000, duration: 150 }, input);
  assert.equal(ok.output_throughput, 4000);
  assert.equal(ok.p99_e2el_ms, 9000);
});

test('a harness that reports its lost requests as `failed` and no `completed` lost only those', () => {
  // The protocol's minimum plus the lost count: 3 of the workload's 600 prompts failed.
  const r = normalizeHarnessResult({ ...good, failed: 3 }, input);
  assert.equal(r.failed, 3);
  assert.equal(r.completed, 597);
  assert.equal(tooManyLost(r), false);
  // Neither given: nothing was reported lost.
  const n = normalizeHarnessResult(good, input);
  assert.deepEqual([n.completed, n.failed], [600, 0]);
  // `completed` alone still counts the rest as lost.
  const c = normalizeHarnessResult({ ...good, completed: 500 }, input);
  assert.deepEqual([c.completed, c.failed], [500, 100]);
  assert.equal(tooManyLost(c), true);
});
