import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressSnapshot } from '../../src/cli/study-progress.js';
import type { TrialSummary } from '../../src/tune/summary.js';

const trial = (n: number, meets: boolean | null, tokPerGpu: number, ttftP99Ms: number): TrialSummary =>
  ({
    number: n,
    state: 'complete',
    origin: 'sampler',
    config: {},
    meets_slo: meets,
    requests: null,
    repeat_of: null,
    metrics: { output_throughput_per_gpu: tokPerGpu, p99_ttft_ms: ttftP99Ms },
    failure_reason: null,
    failure_class: null,
    diagnosis: null,
  }) as unknown as TrialSummary;

test('the progress bar\'s best goodput is the fastest trial meeting the SLOs, whatever the study recommends', () => {
  const snap = progressSnapshot([trial(0, true, 900, 120), trial(1, true, 1400, 300), trial(2, false, 5000, 9000), trial(3, null, 7000, 1)]);
  assert.equal(snap.bestGoodput, 1400);
  assert.equal(snap.frontSize, 2);
  assert.deepEqual(progressSnapshot([trial(0, false, 5000, 9000)]), { bestGoodput: null, frontSize: 0 });
});
