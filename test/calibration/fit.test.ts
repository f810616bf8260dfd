import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitProfile, profileLoss, type MeasuredPoint, type PredictedPoint } from '../../src/calibration/fit.js';
import { defaultCatalog } from '../../src/catalog/index.js';
import type { SimProfile } from '../../src/domain/index.js';

const start = defaultCatalog().profileFor(defaultCatalog().gpu('H100-SXM'));

/** A toy "simulator": TTFT from compute and a fixed cost, TPOT from bandwidth and a per-layer cost. */
function toy(p: SimProfile, tokens: number, layers: number, weightsGb: number): PredictedPoint {
  return { ttftMs: (tokens * 0.004) / p.mfu_bf16 + p.frontend_ms, tpotMs: weightsGb / (3.35 * p.eta_weights) + (layers * p.layer_fixed_us) / 1000 + p.step_fixed_ms };
}
// Prompt tokens, layers, weight GB per GPU (8B, 8B fp8, 14B, 32B, 70B fp8 TP2, 70B fp8 TP4).
const SHAPES: [number, number, number][] = [
  [128, 32, 16],
  [2048, 32, 8],
  [8192, 40, 29],
  [512, 64, 65],
  [4096, 80, 35],
  [1024, 80, 17.5],
];
const truth: SimProfile = { ...start, mfu_bf16: 0.48, frontend_ms: 2.4, eta_weights: 0.62, layer_fixed_us: 18, step_fixed_ms: 0.2 };
const measured: MeasuredPoint[] = SHAPES.map(([t, l, g]) => toy(truth, t, l, g));
const evaluate = (profiles: readonly SimProfile[]) => Promise.resolve(profiles.map((p) => SHAPES.map(([t, l, g]) => toy(p, t, l, g))));
const PARAMS = ['mfu_bf16', 'frontend_ms', 'eta_weights', 'layer_fixed_us', 'step_fixed_ms', 'eta_kv'] as const;

test('the fit recovers the parameters that generated the points; one it cannot see stays where it started', async () => {
  const fit = await fitProfile({ start, params: PARAMS, measured, evaluate });
  for (const k of ['mfu_bf16', 'frontend_ms', 'eta_weights', 'layer_fixed_us', 'step_fixed_ms'] as const) {
    assert.ok(Math.abs(fit.profile[k] / truth[k] - 1) < 0.01, `${k}: ${fit.profile[k]} vs ${truth[k]}`);
  }
  assert.equal(fit.profile.eta_kv, start.eta_kv, 'eta_kv moves nothing here, so it must not move');
  assert.ok(fit.loss < 1e-3 && fit.loss < profileLoss(SHAPES.map(([t, l, g]) => toy(start, t, l, g)), measured));
});

test('the fit is deterministic: the same points and start give the same profile, bit for bit', async () => {
  const a = await fitProfile({ start, params: PARAMS, measured, evaluate, maxIterations: 4 });
  const b = await fitProfile({ start, params: PARAMS, measured, evaluate, maxIterations: 4 });
  assert.deepEqual(a, b);
  assert.equal(a.iterations, 4);
});

test('an L1 loss: one point the model cannot reproduce does not drag the others after it', async () => {
  const outlier = [...measured];
  const third = measured[2] as MeasuredPoint;
  outlier[2] = { ttftMs: (third.ttftMs as number) * 5, tpotMs: third.tpotMs };
  const fit = await fitProfile({ start, params: PARAMS, measured: outlier, evaluate });
  const pred = SHAPES.map(([t, l, g]) => toy(fit.profile, t, l, g));
  const others = pred.filter((_, i) => i !== 2).map((p, i) => Math.abs(p.ttftMs / ((measured.filter((_, j) => j !== 2)[i] as MeasuredPoint).ttftMs as number) - 1));
  assert.ok(Math.max(...others) < 0.1, `the other points keep their fit: ${others.map((e) => e.toFixed(3)).join(', ')}`);
  // A fraction never passes 1, however the points pull.
  const greedy = await fitProfile({ start, params: ['eta_weights'], measured: measured.map((m) => ({ ttftMs: null, tpotMs: (m.tpotMs as number) / 10 })), evaluate });
  assert.ok(greedy.profile.eta_weights <= 1);
});
