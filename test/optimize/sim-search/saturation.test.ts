import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BenchmarkResult, ServerConfig } from '../../../src/domain/index.js';
import { simulatorEvaluate } from '../../../src/optimize/evaluate.js';
import { DEFAULT_OBJECTIVES } from '../../../src/optimize/objectives.js';
import { rankCorrected, residualPosterior, saturatedRun, simulatedSearch } from '../../../src/optimize/sim-search/index.js';
import { spaceEncoder, spaceSource } from '../../../src/optimize/space-source.js';
import { createRng } from '../../../src/util/rng.js';
import { context, sim, slo, space } from './fixture.js';

// The same runs, each marked as a queue that grew without bound: the percentiles are the ones that met the SLOs.
const saturate = (r: BenchmarkResult | null): BenchmarkResult | null =>
  r === null ? null : { ...r, saturation: { saturated: true, offered_rps: 20, sustained_rps: 12, backlog_growth_rps: 8, window_start_s: 10, window_end_s: 20 } };
const search = (simulate: (c: ServerConfig) => BenchmarkResult | null): ReturnType<typeof simulatedSearch> =>
  simulatedSearch({ source: spaceSource(space, context), context, encoder: spaceEncoder(space), slo, objectives: DEFAULT_OBJECTIVES, simulate, rng: createRng(3), candidates: 300, simulateTop: 6 });

test('a simulated run that cannot sustain the load meets no SLO, has no merit and no chance under the error', () => {
  const plain = search(sim.simulate);
  const met = plain.simulated.filter((c) => c.meetsSlo);
  assert.ok(met.length > 0, 'some candidates meet the SLOs on their percentiles');
  const saturated = search((c) => saturate(sim.simulate(c)));
  assert.equal(saturated.simulated.length, plain.simulated.length);
  // (A configuration whose simulated server died has no run to saturate: it meets nothing either.)
  assert.ok(saturated.simulated.some((c) => c.result !== null));
  for (const c of saturated.simulated) {
    assert.equal(saturatedRun(c.result), c.result !== null);
    assert.equal(c.meetsSlo, false);
    assert.equal(c.merit, 0);
    assert.equal(c.goodputPerGpu, 0);
  }
  assert.deepEqual(saturated.front, []);
  // The tuner's re-ranking gives them no chance either, whatever the measured residual.
  const ranked = rankCorrected(saturated, residualPosterior([]), slo, new Set());
  assert.ok(ranked.length > 0);
  for (const r of ranked) assert.equal(r.pMeets, 0);
  // The simplifier's judge: the configuration that met the SLOs no longer does once its run saturates.
  const first = met[0]?.config as ServerConfig;
  assert.equal(simulatorEvaluate(sim, slo, 1)([first])[0]?.meetsSlo, true);
  assert.equal(simulatorEvaluate({ ...sim, simulate: (c) => saturate(sim.simulate(c)) }, slo, 1)([first])[0]?.meetsSlo, false);
});
