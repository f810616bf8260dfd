import { test } from 'node:test';
import assert from 'node:assert/strict';
import { libGpuPairs, marginalRatioScore, ratioScore } from '../../src/calibration/gpu-ratio-check.js';
import type { LibRow } from '../../src/calibration/llm-inference-bench.js';

const row = (hardware: string, batch: number, latency: number, line = 0): LibRow => ({
  line,
  hardware,
  num_gpus: 1,
  framework: 'vLLM',
  model: 'm',
  io_len_tokens: 128,
  batch_size: batch,
  measured_latency_s: latency,
  measured_throughput_tok_s: (batch * 256) / latency,
});
// A100 2 s + 0.1 s per request, H100 1 s + 0.04 s per request: the batch's own work is 2.5× apart.
const rows = [row('Nvidia A100 GPU', 1, 2.1), row('Nvidia A100 GPU', 11, 3.1), row('Nvidia H100 GPU', 1, 1.04), row('Nvidia H100 GPU', 11, 1.44), row('Nvidia H100 GPU', 64, 9)];

test('pairs are the points measured on both GPUs', () => {
  const pairs = libGpuPairs(rows, 'A100-40GB', 'H100-SXM');
  assert.deepEqual(pairs.map((p) => p.batch), [1, 11]);
});

test('a simulator with the measured ratio scores zero; one 10% slow on the first GPU scores +10%', () => {
  const pairs = libGpuPairs(rows, 'A100-40GB', 'H100-SXM');
  assert.equal(ratioScore(pairs, [2.1, 3.1], [1.04, 1.44]).mape, 0);
  const slow = ratioScore(pairs, [2.31, 3.41], [1.04, 1.44]);
  assert.ok(Math.abs(slow.signed - 0.1) < 1e-9 && Math.abs(slow.mape - 0.1) < 1e-9);
  assert.equal(ratioScore(pairs, [null, 3.1], [1.04, 1.44]).pairs, 1);
});

test('the marginal ratio ignores what every batch pays alike: a fixed offset on both GPUs does not move it', () => {
  const pairs = libGpuPairs(rows, 'A100-40GB', 'H100-SXM');
  // The simulator lacks the old stack's fixed time (0.5 s on both), but gets the batch's work right.
  const m = marginalRatioScore(pairs, [1.6, 2.6], [0.54, 0.94]);
  assert.equal(m.pairs, 1);
  assert.ok(Math.abs(m.mape) < 1e-9, JSON.stringify(m));
  assert.ok(ratioScore(pairs, [1.6, 2.6], [0.54, 0.94]).mape > 0.1);
});
