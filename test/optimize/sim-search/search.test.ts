import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_OBJECTIVES, sloConstraints } from '../../../src/optimize/objectives.js';
import { configKey } from '../../../src/optimize/sampler.js';
import { diversePicks, layoutDefaults, layoutOf, pMeetsUnderError, rankCorrected, residualPosterior, simulatedSearch } from '../../../src/optimize/sim-search/index.js';
import { spaceEncoder, spaceSource } from '../../../src/optimize/space-source.js';
import { createRng } from '../../../src/util/rng.js';
import { catalog, chatWorkload, context, sim, slo, space } from './fixture.js';
import { priorSimulator } from '../../../src/calibration/prior-simulator.js';

const search = simulatedSearch({ source: spaceSource(space, context), context, encoder: spaceEncoder(space), slo, objectives: DEFAULT_OBJECTIVES, simulate: sim.simulate, rng: createRng(3), candidates: 3000, simulateTop: 16 });

test('a simulated search runs a diverse top through the simulator and keeps the Pareto set of those meeting the SLOs', () => {
  assert.equal(search.simulated.length, 16);
  assert.equal(new Set(search.simulated.map((c) => configKey(c.config))).size, 16);
  assert.ok(search.front.length >= 1);
  for (const i of search.front) assert.equal(search.simulated[i]?.meetsSlo, true);
  // Every simulated metric is the simulator's own: re-simulating a front member gives the same numbers.
  const first = search.simulated[search.front[0] ?? 0];
  assert.ok(first !== undefined);
  assert.equal(sim.simulate(first.config)?.output_throughput, first.result?.output_throughput);
});

test('diverse picks start at the best simulated goodput and spread out', () => {
  const picks = diversePicks(search, 3);
  assert.equal(picks.length, 3);
  const bestGoodput = Math.max(...search.simulated.map((c) => c.goodputPerGpu));
  assert.equal(picks[0]?.goodputPerGpu, bestGoodput);
  assert.equal(new Set(picks.map((p) => configKey(p.config))).size, 3);
});

test('the measured residual re-ranks the simulated candidates: a server slower than simulated rules out the tight ones', () => {
  const taken = new Set<string>();
  const asSimulated = rankCorrected(search, residualPosterior([]), slo, taken);
  assert.ok(asSimulated.length > 0);
  // Three runs measured with TTFT 2.5× the simulated: candidates close to the TTFT limit lose their chance.
  const sample = search.simulated.filter((c) => c.result !== null).slice(0, 3);
  const pairs = sample.map((c) => ({ simulated: c.values, measured: { ...c.values, ttft_p99_ms: (c.values.ttft_p99_ms ?? 1) * 2.5 } }));
  const slow = rankCorrected(search, residualPosterior(pairs), slo, taken);
  const pOf = (r: typeof slow, k: string): number => r.find((x) => configKey(x.candidate.config) === k)?.pMeets ?? -1;
  for (const c of asSimulated) assert.ok(pOf(slow, configKey(c.candidate.config)) < c.pMeets, 'every P(meets) falls');
  // Taken configurations are never offered.
  const top = asSimulated[0];
  assert.ok(top !== undefined);
  const without = rankCorrected(search, residualPosterior([]), slo, new Set([configKey(top.candidate.config)]));
  assert.ok(without.every((r) => configKey(r.candidate.config) !== configKey(top.candidate.config)));
});

test('a local search from the best of each layout finds what the screened top missed, each step one knob from a simulated configuration', () => {
  // 70B on 4×H200 as vLLM 0.12 decodes: the screened top leaves TP4's best at a CUDA-graph capture size
  // that pads its ITL close to the SLO; one step from it is a configuration with room to spare.
  const slo70 = { ttft_p99_ms: 1500, itl_p99_ms: 80 };
  const w70 = chatWorkload;
  const ctx70 = { hardware: catalog.gpu('H200'), gpuCount: 4, model: catalog.model('llama-3.1-70b'), workload: w70 };
  const sim70 = priorSimulator(null, catalog, { hardware: { gpu: 'H200', count: 4 }, model: 'llama-3.1-70b', workload: w70, slo: slo70, vllmVersion: '0.12.0' });
  const source = spaceSource(space, ctx70);
  const run = (refine: number) => simulatedSearch({ source, context: ctx70, encoder: spaceEncoder(space), slo: slo70, objectives: DEFAULT_OBJECTIVES, simulate: sim70.simulate, rng: createRng(0), candidates: 3000, simulateTop: 16, refine });
  const plain = run(0);
  const refined = run(24);
  assert.equal(plain.simulated.length, 16);
  assert.ok(refined.simulated.length > 16 && refined.simulated.length <= 16 + 24);
  // The screened top is the same; what follows is each a neighbour of something simulated before it.
  assert.deepEqual(refined.simulated.slice(0, 16).map((c) => configKey(c.config)), plain.simulated.map((c) => configKey(c.config)));
  for (const [i, c] of refined.simulated.entries()) {
    if (i < 16) continue;
    const from = refined.simulated.slice(0, i).some((p) => source.neighbours?.(p.config).some((n) => configKey(n) === configKey(c.config)));
    assert.ok(from, `refined candidate ${i} is one step from an earlier one`);
  }
  const value = (s: typeof plain): number => Math.max(...s.simulated.map((c) => c.merit * pMeetsUnderError(c.values, sloConstraints(slo70))));
  assert.ok(value(refined) > value(plain) * 1.02, `expected goodput ${value(refined).toFixed(0)} against ${value(plain).toFixed(0)}`);
});

test("each parallel layout the screen rates well has vLLM's defaults simulated in its precision, within the simulateTop runs", () => {
  assert.deepEqual(layoutDefaults({ tensor_parallel_size: 2, data_parallel_size: 2, quantization: 'fp8', kv_cache_dtype: 'fp8_e4m3', max_num_seqs: 64, block_size: 32 }), { tensor_parallel_size: 2, data_parallel_size: 2, quantization: 'fp8', kv_cache_dtype: 'fp8_e4m3' });
  // At vLLM's own layout and precision the anchor is the defaults trial itself, `{}`.
  assert.deepEqual(layoutDefaults({ tensor_parallel_size: 1, data_parallel_size: 1, enable_expert_parallel: false, quantization: 'none', kv_cache_dtype: 'auto', max_num_seqs: 8 }), {});
  // 70B on 4×H200 (a current vLLM): on some search seeds the sample held no plain TP4 configuration,
  // and the pick was a TP2×DP2 one the bench's world serves a fifth slower (bench/tune-peers.ts).
  const slo70 = { ttft_p99_ms: 1500, itl_p99_ms: 80 };
  const ctx70 = { hardware: catalog.gpu('H200'), gpuCount: 4, model: catalog.model('llama-3.1-70b'), workload: chatWorkload };
  const sim70 = priorSimulator(null, catalog, { hardware: { gpu: 'H200', count: 4 }, model: 'llama-3.1-70b', workload: chatWorkload, slo: slo70 });
  for (const seed of [0, 3]) {
    const s = simulatedSearch({ source: spaceSource(space, ctx70), context: ctx70, encoder: spaceEncoder(space), slo: slo70, objectives: DEFAULT_OBJECTIVES, simulate: sim70.simulate, rng: createRng(seed), candidates: 3000, simulateTop: 16 });
    assert.equal(s.simulated.length, 16, 'the anchors take runs from the sample, not on top of it');
    const anchors = s.simulated.filter((c) => configKey(layoutDefaults(c.config)) === configKey(c.config));
    const excluded = simulatedSearch({ source: spaceSource(space, ctx70), context: ctx70, encoder: spaceEncoder(space), slo: slo70, objectives: DEFAULT_OBJECTIVES, simulate: sim70.simulate, rng: createRng(seed), candidates: 3000, simulateTop: 16, exclude: new Set(anchors.map((c) => configKey(c.config, ctx70))) });
    assert.ok(!excluded.simulated.some((c) => anchors.some((a) => configKey(a.config) === configKey(c.config))), 'an anchor already run (a trial) is not run again');
    assert.ok(anchors.length >= 1 && anchors.length <= 4, `seed ${seed}: ${anchors.length} anchors`);
    assert.equal(new Set(anchors.map((c) => layoutOf(c.config))).size, anchors.length, 'one per layout');
    assert.ok(anchors.some((c) => c.config.tensor_parallel_size === 4 && c.meetsSlo), `seed ${seed}: TP4's defaults simulated and meeting the SLOs`);
  }
});

test('a p90 or mean SLO is judged on the simulated run\'s own p90 or mean, not on the p99 or median the surrogate models', () => {
  const run = search.simulated.find((c) => c.result !== null && c.result.p90_ttft_ms < c.result.p99_ttft_ms * 0.9);
  assert.ok(run?.result !== null && run !== undefined, 'a run whose p90 TTFT sits well under its p99');
  const r = run.result;
  // A limit between the run's p90 and its p99: met on the p90 it names.
  const limit = (r.p90_ttft_ms + r.p99_ttft_ms) / 2;
  const cs = sloConstraints({ ttft_p90_ms: limit });
  assert.ok(pMeetsUnderError(run.values, cs, {}, r) > 0.5, 'judged on its p90, under the limit');
  assert.ok(pMeetsUnderError(run.values, cs) < 0.5, 'the p99 the target maps to is over it');
});
