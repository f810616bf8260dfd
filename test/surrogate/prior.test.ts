import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalCdf } from '../../src/util/normal.js';
import { normalQuantile, priorPosterior, priorSurrogate, SIMULATOR_LOG_SD } from '../../src/surrogate/prior.js';
import { predictSurrogate } from '../../src/surrogate/surrogate.js';
import { logInterval } from '../../src/optimize/recommend.js';
import { makeRows, names } from './fixtures.js';

test('normal quantile and CDF invert each other', () => {
  for (const p of [0.001, 0.02, 0.1, 0.5, 0.8, 0.975, 0.999]) assert.ok(Math.abs(normalCdf(normalQuantile(p)) - p) < 1e-6, String(p));
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959964) < 1e-5);
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-9);
});

test('the posterior of the simulator offset: the prior error with no runs, the measured bias after some', () => {
  const none = priorPosterior([], 0.3);
  assert.deepEqual([none.mean, none.rows], [0, 0]);
  assert.ok(Math.abs(none.sd - 0.3) < 1e-12, 'no runs: the full measured error');
  // Runs that all read 20% slow pull the mean toward log 0.8, and the spread shrinks toward the scatter.
  const slow = priorPosterior(Array<number>(6).fill(Math.log(0.8)), 0.3);
  assert.ok(slow.mean < 0 && slow.mean > Math.log(0.8) && Math.abs(slow.mean - (Math.log(0.8) * 6) / 7) < 1e-12);
  assert.ok(slow.sd < none.sd && slow.sd > 0.3 / Math.SQRT2);
});

test('the prior surrogate prices by the physics baseline, ±2σ the simulator error, shifted by measured runs', () => {
  const { rows } = makeRows(12, 4);
  const empty = priorSurrogate([], names);
  const x = { rows: rows.length, cols: names.length, data: Float32Array.from(rows.flatMap((r) => [...r.x])) };
  const base = Float64Array.from(rows, (r) => r.baselines.output_throughput_per_gpu);
  const p = predictSurrogate(empty, x, { output_throughput_per_gpu: base }, ['output_throughput_per_gpu']);
  const d = p.targets.output_throughput_per_gpu;
  assert.ok(d !== undefined);
  for (let i = 0; i < rows.length; i++) {
    const iv = logInterval(d, i, p.draws);
    assert.ok(Math.abs(iv.mean / (base[i] ?? 1) - 1) < 1e-9, 'centred on the baseline');
    assert.ok(Math.abs(Math.log(iv.high / iv.mean) - 2 * SIMULATOR_LOG_SD.output_throughput_per_gpu) < 1e-6, '±2σ is the measured error');
  }
  assert.equal(p.pStart.every((v) => v === 1), true);
  // After runs, the offset follows them: the mean ratio to the baseline moves toward the measured one.
  const fitted = priorSurrogate(rows, names);
  const post = fitted.prior?.output_throughput_per_gpu;
  const res = rows.map((r) => Math.log((r.targets.output_throughput_per_gpu ?? 1) / r.baselines.output_throughput_per_gpu));
  const meanRes = res.reduce((a, b) => a + b, 0) / res.length;
  assert.ok(post !== undefined && post.rows === rows.filter((r) => r.started && r.targets.output_throughput_per_gpu !== undefined).length);
  assert.ok(Math.abs(post.mean) <= Math.abs(meanRes) + 1e-12 && Math.sign(post.mean) === Math.sign(meanRes), `${post.mean} vs ${meanRes}`);
});
