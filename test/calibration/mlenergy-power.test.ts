import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PowerProfile } from '../../src/domain/index.js';
import { fitPower, leaveOneOut, powerErrors, powerObservation, windowPowerW, type PowerObservation } from '../../src/calibration/mlenergy-power.js';
import { powerSection } from '../../src/calibration/mlenergy-power-report.js';
import { isLmBenchError } from '../../src/errors.js';
import { defaultPowerProfile, simulateSummary, type SimSummary } from '../../src/sim/index.js';
import { catalog, fixed } from '../sim/helpers.js';

const TRUE: PowerProfile = { idle_tdp_frac: 0.14, busy_weight: 0.45, compute_weight: 1.3, memory_weight: 0.2 };

/**
 * Observations made by the model itself: each row's utilisations (busy, tensor, HBM at the measured pace),
 * its power from `TRUE`, and a simulated throughput `pace` × the measured one (the simulator's speed error).
 */
function synthetic(pace = 1): PowerObservation[] {
  const out: PowerObservation[] = [];
  let k = 0;
  for (const [model, gpu, tdpW, gpus] of [
    ['a', 'H100', 700, 1],
    ['b', 'H100', 700, 2],
    ['a', 'B200', 1000, 1],
    ['c', 'B200', 1000, 1],
  ] as const) {
    for (let i = 0; i < 6; i++, k++) {
      const [b, c, m] = [0.95 + 0.01 * (k % 5), 0.02 + 0.05 * i, 0.75 - 0.08 * i + 0.03 * (k % 3)];
      const durationS = 100;
      const measuredPowerW = gpus * tdpW * (TRUE.idle_tdp_frac + (1 - TRUE.idle_tdp_frac) * (TRUE.busy_weight * b + TRUE.compute_weight * c + TRUE.memory_weight * m));
      // The simulator ran `pace` × faster: its sums over its (shorter) window are the same work, so the utilisations it saw are × pace.
      out.push({ model, gpu, gpus, tdpW, durationS, busyGpuS: b * gpus * durationS, computeGpuS: pace * c * gpus * durationS, memoryGpuS: pace * m * gpus * durationS, measuredPowerW, measuredThroughput: 1000, predictedThroughput: 1000 * pace });
    }
  }
  return out;
}

test('the power fit recovers the weights that made the data, at the measured pace whatever the simulated one', () => {
  for (const pace of [1, 1.4]) {
    const fit = fitPower(synthetic(pace), TRUE.idle_tdp_frac);
    for (const k of ['busy_weight', 'compute_weight', 'memory_weight'] as const) assert.ok(Math.abs(fit[k] - TRUE[k]) < 1e-6, `pace ${pace}: ${k} ${fit[k]} vs ${TRUE[k]}`);
    assert.equal(fit.idle_tdp_frac, TRUE.idle_tdp_frac, 'the idle share is given, not fitted');
  }
  // At the measured pace the fitted model reproduces the measured power; at a pace 40% too fast the
  // prediction (which runs at the simulator's pace) overshoots and J/token carries the rest of the error.
  for (const o of synthetic(1)) assert.ok(Math.abs(powerErrors(o, TRUE).power) < 1e-9 && Math.abs(powerErrors(o, TRUE).joulesPerToken) < 1e-9);
  const fast = synthetic(1.4).map((o) => powerErrors(o, TRUE));
  assert.ok(fast.every((e) => e.power > 0 && e.joulesPerToken < 0));
});

test('weights stay non-negative: data that would want a negative weight get a zero one', () => {
  // Power that falls with HBM utilisation: an unconstrained fit would give memory a negative weight.
  const obs = synthetic(1).map((o) => ({ ...o, measuredPowerW: o.measuredPowerW - 0.3 * o.gpus * o.tdpW * (o.memoryGpuS / (o.gpus * o.durationS)) }));
  const fit = fitPower(obs, 0.14);
  assert.equal(fit.memory_weight, 0);
  assert.ok(fit.busy_weight >= 0 && fit.compute_weight > 0);
  assert.throws(
    () => fitPower([], 0.14),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_CONFIG_INVALID'),
  );
});

test('the window power is capped at TDP × GPUs and never below idle × GPUs', () => {
  const o = synthetic(1)[0] as PowerObservation;
  assert.equal(windowPowerW({ ...o, computeGpuS: 10 * o.durationS }, TRUE), o.gpus * o.tdpW);
  assert.equal(windowPowerW({ ...o, busyGpuS: 0, computeGpuS: 0, memoryGpuS: 0 }, TRUE), o.gpus * o.tdpW * TRUE.idle_tdp_frac);
});

test('leave one out refits without each group: a group unlike the others is predicted worse than in the joint fit', () => {
  const obs = synthetic(1);
  // Model "c" draws 15% more than the model says: the joint fit shares its error, the held-out fit does not see it.
  const odd = obs.map((o) => (o.model === 'c' ? { ...o, measuredPowerW: o.measuredPowerW * 1.15 } : o));
  const joint = fitPower(odd, 0.14);
  const loo = leaveOneOut(odd, (o) => o.model, 0.14);
  assert.deepEqual([...loo.keys()].sort(), ['a', 'b', 'c']);
  const errC = (p: PowerProfile): number => odd.filter((o) => o.model === 'c').reduce((s, o) => s + Math.abs(powerErrors(o, p).power), 0);
  assert.ok(errC(loo.get('c') as PowerProfile) > errC(joint), 'held out, c is predicted from a and b alone');
  for (const k of ['busy_weight', 'compute_weight', 'memory_weight'] as const) assert.ok(Math.abs((loo.get('c') as PowerProfile)[k] - TRUE[k]) < 1e-6, `without c the fit is exact again: ${k}`);
  const doc = powerSection(
    odd.map((o) => ({ obs: o, predictedPowerW: windowPowerW(o, joint), predictedJoulesPerToken: windowPowerW(o, joint) / o.predictedThroughput })),
    joint,
    { idleSource: 'a test', refitted: true },
  );
  assert.match(doc, /\| model: c \| B200 \| 6 \|/);
  assert.match(doc, /\| \*\*GPU, all\*\* \| \| 24 \|/);
});

test('an observation needs a steady-state window with energy; it reads the window sums of a real summary', () => {
  const w = fixed(100, 200, { kind: 'burst' }, 64);
  const input = { config: { max_num_seqs: 16 }, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'qwen3-8b', workload: w, seed: 1, catalog, window: { startAfterFirstTokens: 16, endAfterFinished: 64 - 17 } } as const;
  const s = simulateSummary(input);
  assert.ok(s.ok);
  const o = powerObservation('qwen3-8b', 'H100', 500, 2000, s.summary);
  assert.ok(o !== null);
  assert.equal(o.predictedThroughput, s.summary.window?.outputThroughput);
  assert.ok(o.busyGpuS > 0 && o.busyGpuS <= o.durationS + 1e-9);
  // The window formula under the shipped profile reproduces the simulator's own figure (no step hits the cap here).
  const shipped = s.summary.energy;
  const profile = defaultPowerProfile();
  assert.ok(shipped !== null && profile !== null);
  // The window formula reproduces the simulator's own figure, but for the steps the per-step cap holds
  // down (the burst's prefill steps): it can only read higher, and not by much.
  const formula = windowPowerW(o, profile);
  assert.ok(formula >= shipped.avgPowerW - 1e-9 && formula < 1.02 * shipped.avgPowerW, `${formula} vs ${shipped.avgPowerW} W`);
  const uncapped = simulateSummary({ ...input, power: { ...profile, compute_weight: 0 } });
  assert.ok(uncapped.ok && uncapped.summary.energy !== null);
  assert.ok(Math.abs(windowPowerW(o, { ...profile, compute_weight: 0 }) / uncapped.summary.energy.avgPowerW - 1) < 1e-9, 'exact where no step reaches TDP');
  const noPower = simulateSummary({ ...input, power: null });
  assert.ok(noPower.ok);
  assert.equal(powerObservation('qwen3-8b', 'H100', 500, 2000, noPower.summary), null);
  const windowless: SimSummary = { ...s.summary, window: null };
  assert.equal(powerObservation('qwen3-8b', 'H100', 500, 2000, windowless), null);
});
