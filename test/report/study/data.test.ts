import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BenchmarkResult, Trial } from '../../../src/domain/index.js';
import { buildHistoryData, historyRows } from '../../../src/report/study/data/history.js';
import { buildLatencyData } from '../../../src/report/study/data/latency.js';
import { buildImportanceData, buildParityData, buildPartialDependenceData } from '../../../src/report/study/data/model-plots.js';
import { buildEnergyTradeData } from '../../../src/report/study/data/energy.js';
import { buildParetoData, sloLine } from '../../../src/report/study/data/pareto.js';
import { whySection } from '../../../src/report/study/why.js';
import { answerSection } from '../../../src/report/study/sections.js';
import { plotSpec } from '../../../src/report/study/plots.js';
import { isRandomStudy, latencyCandidates } from '../../../src/report/study/analysis.js';
import { cdfPoints, latencySeries, statsPoints } from '../../../src/report/study/latency.js';
import type { ModelAnalysis, StudyAnalysis } from '../../../src/report/study/types.js';
import { simulate } from '../../../src/sim/index.js';
import { summarizeStudy } from '../../../src/tune/summary.js';
import { defaultCatalog } from '../../../src/catalog/index.js';
import { specOf } from './fixture.js';

/** The plot data objects on hand-made studies: every expectation is worked out from the numbers below. */
const spec = specOf('hand');
const base: BenchmarkResult = (() => {
  const out = simulate({ config: {}, hardware: spec.hardware, model: spec.model, workload: { ...spec.workload, num_prompts: 20 }, seed: 1 });
  assert.ok(out.ok);
  return out.result;
})();

function result(tp: number, ttft: number, itl: number): BenchmarkResult {
  return { ...base, output_throughput: tp, p99_ttft_ms: ttft, p99_itl_ms: itl, p99_tpot_ms: 5 };
}

function trial(number: number, r: BenchmarkResult | null, origin: Trial['origin'] = 'space_filling'): Trial {
  return {
    id: number + 1,
    study_id: 1,
    number,
    state: r === null ? 'failed' : 'complete',
    origin,
    config: { max_num_seqs: 8 * (number + 1) },
    values: {},
    result: r,
    failure_reason: r === null ? 'C12: no KV blocks' : null,
    started: r === null ? false : true,
    created_at_ms: 0,
    started_at_ms: 0,
    finished_at_ms: 0,
    heartbeat_at_ms: null,
    attrs: {},
  };
}

const NO_MODEL: ModelAnalysis = { available: false, reason: 'too few runs' };

function analysis(trials: Trial[], opts: { model?: ModelAnalysis; baseline?: Trial[]; slo?: typeof spec.slo; objective?: typeof spec.objective } = {}): StudyAnalysis {
  const s = { ...spec, slo: opts.slo ?? spec.slo, ...(opts.objective === undefined ? {} : { objective: opts.objective }) };
  const study = { id: 1, state: 'done' as const, spec: s, created_at_ms: 0, updated_at_ms: 0 };
  return {
    study,
    trials,
    deployment: { hardware: defaultCatalog().gpu(s.hardware.gpu), model: defaultCatalog().model(s.model) },
    summary: summarizeStudy({ study, trials, front: [], model: defaultCatalog().model(s.model), hardware: defaultCatalog().gpu(s.hardware.gpu), stopReason: 'budget' }),
    effectiveConfigs: Object.fromEntries(trials.map((t) => [t.number, { ...t.config, block_size: 16 }])),
    baseline: opts.baseline === undefined ? null : { name: 'rand', trials: opts.baseline, random: isRandomStudy(opts.baseline), sameDeployment: true },
    model: opts.model ?? NO_MODEL,
    prune: null,
    latency: [],
    targetKind: 'sim',
    explanation: null,
  };
}

// A (1000, 100 ms), B (2000, 200 ms), C (1500, 300 ms: dominated by B), D (3000, 500 ms: past the 350 ms SLO, still on the front), E failed.
const A = trial(0, result(1000, 100, 30), 'default');
const D = trial(1, result(3000, 500, 20));
const E = trial(2, null);
const B = trial(3, result(2000, 200, 10));
const C = trial(4, result(1500, 300, 40));
const TRIALS = [A, D, E, B, C];

test('pareto data: dominated points, the front staircase, the SLO line and the recommended point', () => {
  const d = buildParetoData(analysis(TRIALS), 'ttft');
  assert.equal(d.points.length, 4, 'failed trials are not plotted');
  const by = new Map(d.points.map((p) => [p.trial, p]));
  assert.deepEqual([...by.entries()].filter(([, p]) => p.dominated).map(([n]) => n), [4]);
  assert.deepEqual(d.front.map((f) => f.latencyMs), [100, 200, 500]);
  assert.deepEqual(d.slo, { key: 'ttft_p99_ms', limitMs: 350 });
  assert.equal(by.get(3)?.recommended, true, 'B: most throughput among trials meeting the SLOs');
  assert.equal(d.points.filter((p) => p.recommended).length, 1);
  assert.equal(by.get(1)?.meetsSlo, false);
  assert.equal(by.get(0)?.config['block_size'], 16, 'the effective configuration, not only the knobs set');
  assert.ok(d.points.every((p) => p.kind === 'measured' && p.latencyLowMs === null));
});

test('pareto data: a re-measured configuration is one point at the mean of its runs, where the answer puts the pick', () => {
  // P measured twice (the pick: mean 7803 tok/s at 255 ms), Q twice (mean 7717 at 232 ms). Run by run,
  // Q's second run (7955 at 207 ms) dominated P's first (7841 at 249 ms): the ringed pick was drawn faint,
  // at figures the answer never states.
  const P = { max_num_seqs: 128 };
  const Q = { max_num_seqs: 1024 };
  const at = (t: Trial, config: Trial['config'], origin: Trial['origin'] = t.origin): Trial => ({ ...t, config, origin });
  const trials = [
    at(trial(0, result(7841, 249, 21)), P),
    at(trial(1, result(7480, 257, 23)), Q),
    at(trial(2, result(7765, 260, 21)), P, 'remeasure'),
    at(trial(3, result(7955, 207, 23)), Q, 'remeasure'),
  ];
  const a = analysis(trials);
  const rec = a.summary.recommendation;
  assert.ok(rec !== null);
  assert.equal(rec.trial, 0);
  assert.deepEqual(rec.measurements, [0, 2]);
  const d = buildParetoData(a, 'ttft');
  assert.equal(d.points.length, 2, 'one point per configuration');
  const pick = d.points.find((p) => p.recommended);
  assert.ok(pick !== undefined);
  assert.equal(pick.trial, 0);
  assert.deepEqual(pick.runs, [0, 2]);
  assert.equal(pick.throughputPerGpu, rec.measured.output_throughput_per_gpu, 'the answer’s figure');
  assert.equal(pick.latencyMs, rec.measured.p99_ttft_ms);
  assert.equal(pick.dominated, false, 'on the front, as the summary’s front says');
  const q = d.points.find((p) => p.trial === 1);
  assert.deepEqual([q?.throughputPerGpu, q?.latencyMs, q?.dominated, q?.runs], [(7480 + 7955) / 2, (257 + 207) / 2, false, [1, 3]]);
  assert.deepEqual(d.front.map((f) => f.latencyMs), [232, 254.5]);
});

test('the latency plot’s “recommended” is the answer’s pick, and a re-measured configuration is drawn once', () => {
  // As in the Pareto test above: P (trials 0, 2) is the pick on its mean; Q's re-measurement (trial 3)
  // is the single fastest run, which the latency plot used to label "recommended".
  const P = { max_num_seqs: 128 };
  const Q = { max_num_seqs: 1024 };
  const at = (t: Trial, config: Trial['config'], origin: Trial['origin'] = t.origin): Trial => ({ ...t, config, origin });
  const trials = [
    at(trial(0, result(1000, 100, 30), 'default'), {}),
    at(trial(1, result(7841, 249, 21)), P),
    at(trial(2, result(7480, 257, 23)), Q),
    at(trial(3, result(7765, 260, 21)), P, 'remeasure'),
    at(trial(4, result(7955, 207, 23)), Q, 'remeasure'),
    at(trial(5, result(9000, 900, 23)), { max_num_seqs: 64 }),
  ];
  const a = analysis(trials);
  assert.equal(a.summary.recommendation?.trial, 1);
  const c = latencyCandidates(a.study.spec, trials);
  assert.deepEqual(
    c.map((x) => [x.label, x.trial.number]),
    [
      ['recommended (trial 1)', 1],
      ['#2 (trial 2)', 2],
      ['#3 (trial 0)', 0],
    ],
  );
});

test('the answer states the headroom on whatever latency statistic the SLOs limit, not only p99', () => {
  // D is the pick under a loose p95 TTFT limit; its result's p95 TTFT is the simulated run's.
  const a = analysis(TRIALS, { slo: { ttft_p95_ms: 100_000, itl_p99_ms: 50 } });
  assert.equal(a.summary.recommendation?.trial, 1);
  const s = answerSection(a);
  assert.ok(s.kind === 'html');
  if (s.kind !== 'html') return;
  assert.doesNotMatch(s.html, /no latency SLO set/);
  assert.match(s.html, new RegExp(`p95 TTFT ${base.p95_ttft_ms.toFixed(1)} ms of 100000 ms \\(\\d+% headroom\\), p99 ITL 20\\.0 ms of 50 ms \\(60% headroom\\)`));
});

test('“why configurations fell short” of a study where nothing was measured does not say every trial met the SLOs', () => {
  const none = whySection(analysis([E]));
  assert.ok(none.kind === 'html');
  if (none.kind !== 'html') return;
  assert.doesNotMatch(none.html, /met the SLOs/);
  assert.match(none.html, /No trial was measured/);
  const some = whySection(analysis(TRIALS));
  assert.ok(some.kind === 'html' && !some.html.includes('No trial was measured'));
});

test('pareto data in the ITL plane has its own dominance', () => {
  const d = buildParetoData(analysis(TRIALS), 'itl');
  // ITL: A 30, D 20, B 10, C 40 → B dominates A and C; D (more throughput) survives.
  assert.deepEqual(d.points.filter((p) => p.dominated).map((p) => p.trial).sort(), [0, 4]);
  assert.deepEqual(d.slo, { key: 'itl_p99_ms', limitMs: 50 });
});

/** A result with joules per output token (null: a run without a power figure). */
function withJ(r: BenchmarkResult, j: number | null): BenchmarkResult {
  const e = r.energy;
  assert.ok(e !== null && e !== undefined);
  return { ...r, energy: j === null ? null : { ...e, energy_per_output_token_j: j, avg_power_w: 500 } };
}

// J/token: A 0.30, D 0.10 (past the SLO), B 0.20, C 0.15 (the fewest among trials meeting the SLOs), F no power figure.
const EA = trial(0, withJ(result(1000, 100, 30), 0.3), 'default');
const ED = trial(1, withJ(result(3000, 500, 20), 0.1));
const EB = trial(3, withJ(result(2000, 200, 10), 0.2));
const EC = trial(4, withJ(result(1500, 300, 40), 0.15));
const EF = trial(5, withJ(result(2500, 150, 10), null));
const ENERGY_TRIALS = [EA, ED, EB, EC, EF];

test('pareto data on the energy axis: J/token against throughput, runs without power left out, no SLO line', () => {
  const d = buildParetoData(analysis(ENERGY_TRIALS), 'energy');
  assert.deepEqual(d.points.map((p) => p.trial), [0, 1, 3, 4], 'the run without a power figure is not placed');
  // Less J/token and more throughput: D (0.10, 3000) dominates everyone.
  assert.deepEqual(d.points.filter((p) => !p.dominated).map((p) => p.trial), [1]);
  assert.equal(d.slo, null);
  // Goodput picks F (the most throughput under the SLOs), which has no energy figure: nothing is ringed.
  assert.equal(analysis(ENERGY_TRIALS).summary.recommendation?.trial, 5);
  assert.equal(d.points.filter((p) => p.recommended).length, 0);
});

test('energy trade data: J/token against p99 TTFT, the batch, the SLO-meeting front and the pick by the objective', () => {
  const d = buildEnergyTradeData(analysis(ENERGY_TRIALS, { objective: 'tokens_per_joule' }));
  assert.equal(d.withoutEnergy, 1);
  assert.equal(d.objective, 'tokens_per_joule');
  assert.deepEqual(d.slo, { key: 'ttft_p99_ms', limitMs: 350 });
  const by = new Map(d.points.map((p) => [p.trial, p]));
  assert.deepEqual([...by.keys()], [0, 1, 3, 4]);
  assert.equal(by.get(4)?.recommended, true, 'tokens_per_joule picks C, the fewest joules under the SLOs');
  assert.equal(by.get(1)?.meetsSlo, false);
  assert.equal(by.get(3)?.batch, 32, 'max_num_seqs of the effective configuration');
  // Among A (100 ms, 0.30), B (200, 0.20), C (300, 0.15) none dominates another; D missed the SLOs.
  assert.deepEqual(d.front.map((f) => f.ttftMs), [100, 200, 300]);
  assert.equal(by.get(1)?.onFront, false);
  const g = buildEnergyTradeData(analysis([EA, ED, EB, EC]));
  assert.equal(g.points.find((p) => p.recommended)?.trial, 3, 'a goodput study picks B, the most throughput under the SLOs');
  assert.equal(g.objective, 'goodput');
});

test('energy trade data: a re-measured configuration is one point at the mean of its runs, the ring where the answer puts the pick', () => {
  // C (trials 4 and 6) is the tokens_per_joule pick on its mean J/token (0.16); its first run alone is 0.15.
  const again = { ...EC, id: 7, number: 6, origin: 'remeasure' as const, result: withJ(result(1400, 320, 40), 0.17) };
  const a = analysis([EA, ED, EB, EC, again], { objective: 'tokens_per_joule' });
  const rec = a.summary.recommendation;
  assert.equal(rec?.trial, 4);
  const d = buildEnergyTradeData(a);
  assert.deepEqual(d.points.map((p) => p.trial), [0, 1, 3, 4], 'one point per configuration');
  const pick = d.points.find((p) => p.recommended);
  assert.deepEqual(pick?.runs, [4, 6]);
  assert.ok(Math.abs((pick?.jPerToken ?? 0) - 0.16) < 1e-12);
  assert.ok(Math.abs((pick?.jPerToken ?? 0) - (rec?.measured.energy_per_output_token_j ?? 0)) < 1e-12, 'the answer’s figure');
  assert.equal(pick?.ttftMs, 310);
  assert.equal(pick?.throughputPerGpu, 1450);
});

test('the SLO line takes the p99 key, else the tighter statistic the optimizer checks, else none', () => {
  assert.deepEqual(sloLine({ ttft_p95_ms: 200 }, 'ttft'), { key: 'ttft_p95_ms', limitMs: 200 });
  assert.deepEqual(sloLine({ ttft_p99_ms: 300, ttft_p90_ms: 100 }, 'ttft'), { key: 'ttft_p99_ms', limitMs: 300 });
  assert.equal(sloLine({ ttft_p99_ms: 300 }, 'itl'), null);
  assert.equal(buildParetoData(analysis(TRIALS, { slo: {} }), 'ttft').slo, null);
});

function model(over: Partial<Extract<ModelAnalysis, { available: true }>> = {}): ModelAnalysis {
  return {
    available: true,
    modelId: 1,
    savedBy: 'fx',
    rows: 10,
    measuredRows: 9,
    parityMethod: 'in_sample',
    folds: 0,
    parity: [
      { target: 'ttft_p99_ms', measured: 100, predicted: 110, low: 90, high: 130 },
      { target: 'ttft_p99_ms', measured: 400, predicted: 380, low: 300, high: 450 },
      { target: 'output_throughput_per_gpu', measured: 1000, predicted: 900, low: 800, high: 1000 },
    ],
    mape: { ttft_p99_ms: 0.075, output_throughput_per_gpu: 0.1 },
    importance: { block_size: 0.001, max_num_seqs: 0.2, enforce_eager: -0.01 },
    partialDependence: [{ knob: 'max_num_seqs', points: [{ value: 8, mean: 100, low: 90, high: 110 }, { value: 16, mean: 200, low: 180, high: 220 }] }],
    pdTarget: 'output_throughput_per_gpu',
    predictedFront: [
      { config: { max_num_seqs: 512 }, predicted: { output_throughput_per_gpu: { mean: 4000, low: 3500, high: 4600 }, ttft_p99_ms: { mean: 250, low: 200, high: 320 }, itl_p99_ms: { mean: 15, low: 12, high: 19 } }, pStart: 1, pMeetsSlo: 0.9 },
      { config: { max_num_seqs: 256 }, predicted: { output_throughput_per_gpu: { mean: 3500, low: 3000, high: 4000 } }, pStart: 1, pMeetsSlo: 0.95 },
    ],
    trialPredictions: {},
    recommendedPredicted: null,
    trust: { level: 'thin', reasons: ['few runs'] },
    rule: 'the highest lower bound',
    ...over,
  };
}

test('predicted points carry their intervals and are kept apart from the measured dominance', () => {
  const d = buildParetoData(analysis(TRIALS, { model: model() }), 'ttft');
  const pred = d.points.filter((p) => p.kind === 'predicted');
  assert.equal(pred.length, 1, 'a candidate without a predicted TTFT cannot be placed');
  assert.deepEqual([pred[0]?.latencyLowMs, pred[0]?.latencyMs, pred[0]?.latencyHighMs], [200, 250, 320]);
  assert.deepEqual([pred[0]?.throughputLow, pred[0]?.throughputHigh], [3500, 4600]);
  assert.equal(pred[0]?.dominated, false);
  // A predicted point with more throughput than B does not make B dominated: measured dominance is among measured points.
  assert.equal(d.points.find((p) => p.trial === 3)?.dominated, false);
});

test('a surrogate that cannot rank the knobs points to “Why these flags” only when the report has that section', () => {
  const flat = model({ importance: { block_size: 0, max_num_seqs: 0 }, partialDependence: [] });
  // No explanation (no pick, or none simplified): the report has no “Why these flags” section to point to.
  const a = analysis(TRIALS, { model: flat });
  assert.equal(a.explanation, null);
  for (const kind of ['importance', 'partial_dependence'] as const) {
    const out = plotSpec(a, kind);
    assert.ok(!out.ok);
    if (!out.ok) {
      assert.match(out.reason, /cannot rank the knobs/);
      assert.doesNotMatch(out.reason, /Why these flags/);
    }
  }
});

test('history: goodput is 0 off the SLOs, best-so-far and hypervolume never fall', () => {
  const h = buildHistoryData(analysis(TRIALS));
  assert.deepEqual(h.reference, [0, 350]);
  assert.deepEqual(h.rows.map((r) => r.trial), [0, 1, 2, 3, 4]);
  assert.deepEqual(h.rows.map((r) => r.goodputPerGpu), [1000, 0, 0, 2000, 1500]);
  assert.deepEqual(h.rows.map((r) => r.bestGoodputPerGpu), [1000, 1000, 1000, 2000, 2000]);
  // A alone dominates 1000 × (350 − 100); B adds 1000 × (350 − 200) above it; C is inside.
  assert.deepEqual(h.rows.map((r) => r.hypervolume), [250_000, 250_000, 250_000, 400_000, 400_000]);
  for (let i = 1; i < h.rows.length; i++) assert.ok((h.rows[i]?.hypervolume ?? 0) >= (h.rows[i - 1]?.hypervolume ?? 0));
});

test('history with a random-search baseline: two series on one reference point', () => {
  const rand = [trial(0, result(1200, 340, 20), 'default'), trial(1, result(800, 50, 20), 'random')];
  const h = buildHistoryData(analysis(TRIALS, { baseline: rand }));
  assert.deepEqual(h.series, ['hand', 'rand (random search)']);
  const r = h.rows.filter((x) => x.series === 'rand (random search)');
  assert.deepEqual(r.map((x) => x.bestGoodputPerGpu), [1200, 1200]);
  assert.deepEqual(r.map((x) => x.hypervolume), [1200 * 10, 1200 * 10 + 800 * 290]);
  assert.deepEqual(historyRows('x', [], spec, h.reference), []);
  // A study named with --baseline that is not a random search is not labelled one.
  const guided = [trial(0, result(1200, 340, 20), 'default'), trial(1, result(800, 50, 20), 'surrogate')];
  assert.deepEqual(buildHistoryData(analysis(TRIALS, { baseline: guided })).series, ['hand', 'rand']);
});

test('model plots: importance sorted, partial dependence in grid order, parity band around y = x', () => {
  assert.equal(buildImportanceData(NO_MODEL), null);
  assert.equal(buildParityData(NO_MODEL), null);
  assert.equal(buildPartialDependenceData(NO_MODEL), null);
  const m = model();
  assert.deepEqual(buildImportanceData(m)?.map((b) => b.knob), ['max_num_seqs', 'block_size', 'enforce_eager']);
  const pd = buildPartialDependenceData(m);
  assert.deepEqual(pd?.rows.map((r) => [r.value, r.order]), [['8', 0], ['16', 1]]);
  const p = buildParityData(m);
  assert.ok(p !== null);
  assert.deepEqual(p.targets, ['ttft_p99_ms', 'output_throughput_per_gpu']);
  const band = p.bands.filter((b) => b.target === 'ttft_p99_ms');
  assert.equal(band.length, 13);
  assert.ok(Math.abs((band[0]?.x ?? 0) - 100) < 1e-9 && Math.abs((band[12]?.x ?? 0) - 400) < 1e-9, 'spans the measured and predicted range');
  for (const b of band) {
    assert.ok(Math.abs(b.low - b.x * 0.925) < 1e-9 && Math.abs(b.high - b.x * 1.075) < 1e-9);
  }
});

test('latency CDFs: thinned, monotone, ending at 1; stats points at the result percentiles', () => {
  const xs = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) + 1);
  const c = cdfPoints(xs);
  assert.ok(c.length <= 201 && c.length >= 100);
  assert.equal(c[c.length - 1]?.q, 1);
  assert.equal(c[c.length - 1]?.ms, 1000);
  for (let i = 1; i < c.length; i++) {
    assert.ok((c[i]?.q ?? 0) > (c[i - 1]?.q ?? 0));
    assert.ok((c[i]?.ms ?? 0) >= (c[i - 1]?.ms ?? 0));
  }
  assert.deepEqual(cdfPoints([]), []);
  const r = result(1000, 300, 20);
  assert.deepEqual(statsPoints(r, 'ttft').map((p) => [p.q, p.ms]), [[0.5, r.p50_ttft_ms], [0.9, r.p90_ttft_ms], [0.95, r.p95_ttft_ms], [0.99, 300]]);
  const rows = buildLatencyData([{ label: 'x', trial: 0, source: 'result_stats', ttft: [{ ms: 10, q: 0.5 }, { ms: 0, q: 0.9 }], itl: [{ ms: 2, q: 0.5 }] }]);
  assert.deepEqual(rows.map((x) => [x.metric, x.ms]), [['TTFT', 10], ['ITL', 2]], 'zeros cannot sit on a log axis');
});

test('latency series: re-simulated records for a sim study, the result’s percentiles otherwise', () => {
  const candidates = [{ label: 'B', trial: B }];
  const [stats] = latencySeries({ spec, targetKind: 'endpoint', candidates, catalog: defaultCatalog() });
  assert.equal(stats?.source, 'result_stats');
  assert.deepEqual(stats?.ttft.map((p) => p.q), [0.5, 0.9, 0.95, 0.99]);
  assert.equal(stats?.ttft[3]?.ms, 200);
  const [sim] = latencySeries({ spec, targetKind: 'sim', candidates, catalog: defaultCatalog() });
  assert.equal(sim?.source, 'sim_records');
  assert.equal(sim?.ttft[sim.ttft.length - 1]?.q, 1);
  assert.ok((sim?.itl.length ?? 0) > 50);
  assert.deepEqual(latencySeries({ spec, targetKind: 'sim', candidates: [{ label: 'E', trial: E }], catalog: defaultCatalog() }), [], 'a failed trial has nothing to draw');
});
