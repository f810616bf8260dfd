import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultCatalog } from '../../src/catalog/index.js';
import { StudyObjective, type BenchmarkResult, type ServerConfig, type StudySpec } from '../../src/domain/index.js';
import { DEFAULT_OBJECTIVES, merit, objectivesFor, pickRule, studyObjectiveOf } from '../../src/optimize/objectives.js';
import { recommend } from '../../src/optimize/recommend.js';
import { configGroups, rankFeasible } from '../../src/optimize/repeats.js';
import { randomSampler } from '../../src/optimize/samplers.js';
import { createOptimizationStudy, studyRanking } from '../../src/optimize/study.js';
import { priorSurrogate } from '../../src/surrogate/prior.js';
import { simulate } from '../../src/sim/index.js';
import { openStore } from '../../src/store/index.js';
import { createRng } from '../../src/util/rng.js';
import { context, encoder, names, source } from '../surrogate/fixtures.js';

/**
 * Study objectives (issue 25 §4): each names its Pareto axes and the rule that picks one configuration
 * under the SLOs; `tokens_per_joule` ranks measured and predicted configurations by joules per output
 * token, and a run without a power figure stays a measurement.
 */
const catalog = defaultCatalog();
const workload = { ...context.workload, num_prompts: 40 };
const spec = (objective: StudyObjective): StudySpec => ({
  name: `obj-${objective}`,
  space: 'toy',
  hardware: { gpu: 'H100-SXM', count: 1 },
  model: 'llama-3.1-8b',
  workload,
  slo: { ttft_p99_ms: 60_000 },
  objectives: objectivesFor(objective),
  objective,
  target: 'sim',
  seed: 1,
  budget_trials: 12,
  budget_hours: null,
  parallel: 1,
});

function run(config: ServerConfig, over: { tokS?: number; j?: number | null } = {}): BenchmarkResult {
  const out = simulate({ config, hardware: { gpu: 'H100-SXM', count: 1 }, model: 'llama-3.1-8b', workload, seed: 1, catalog });
  assert.ok(out.ok);
  const r = out.result;
  const energy = over.j === null ? null : over.j === undefined ? r.energy : r.energy === null || r.energy === undefined ? null : { ...r.energy, energy_per_output_token_j: over.j };
  return { ...r, output_throughput: over.tokS ?? r.output_throughput, energy };
}

test('each objective names its axes and its rule, and objectives stand for the objective they lead with', () => {
  assert.deepEqual(objectivesFor('goodput'), [...DEFAULT_OBJECTIVES]);
  for (const o of StudyObjective.options) {
    assert.equal(studyObjectiveOf({ objectives: objectivesFor(o) }), o, o);
    assert.equal(studyObjectiveOf({ objective: o, objectives: [...DEFAULT_OBJECTIVES] }), o, 'a stored objective wins');
  }
  assert.equal(studyObjectiveOf({}), 'goodput');
  assert.deepEqual(pickRule('tokens_per_joule'), { objective: 'tokens_per_joule', target: 'energy_per_output_token_j', direction: 'minimize' });
  // usd_per_mtok ranks as goodput per GPU: one GPU type's price per GPU-hour is a constant.
  assert.equal(pickRule('usd_per_mtok').target, pickRule('goodput').target);
  assert.equal(merit({ energy_per_output_token_j: 0.25 }, pickRule('tokens_per_joule')), 4, 'tokens per joule');
  assert.equal(merit({ output_throughput_per_gpu: 900 }, pickRule('goodput')), 900);
  assert.equal(merit({}, pickRule('tokens_per_joule')), 0);
});

test('measured configurations rank by J/token for tokens_per_joule, by throughput for goodput', () => {
  const s = spec('tokens_per_joule');
  const A: ServerConfig = { max_num_seqs: 64 };
  const B: ServerConfig = { max_num_seqs: 128 };
  const C: ServerConfig = { max_num_seqs: 32 };
  const trials = [
    { config: A, result: run(A, { tokS: 5000, j: 0.1 }) },
    { config: B, result: run(B, { tokS: 6000, j: 0.2 }) },
    { config: C, result: run(C, { tokS: 4000, j: null }) },
  ].map((x, i) => ({ id: i + 1, study_id: 1, number: i, state: 'complete' as const, origin: 'random' as const, config: x.config, values: {}, result: x.result, failure_reason: null, started: true, created_at_ms: 0, started_at_ms: 0, finished_at_ms: 0, heartbeat_at_ms: 0, attrs: {} }));
  const byEnergy = rankFeasible(configGroups(trials, s.slo, studyRanking(s)), studyRanking(s));
  assert.deepEqual(byEnergy.map((g) => g.config), [A, B, C], 'fewest joules first; a run without power last');
  const g = spec('goodput');
  const byTput = rankFeasible(configGroups(trials, g.slo, studyRanking(g)), studyRanking(g));
  assert.deepEqual(byTput.map((x) => x.config), [B, A, C]);
});

test('a run without an energy figure stays measured in a tokens_per_joule study, off the energy front', async () => {
  let t = 0;
  const study = createOptimizationStudy(openStore(':memory:', { now: () => ++t }), spec('tokens_per_joule'), randomSampler(source), createRng(3));
  const [a, b] = await study.ask(2);
  assert.ok(a !== undefined && b !== undefined);
  const told = study.tell(a.id, { state: 'complete', result: run(a.config, { j: null }) });
  assert.equal(told.state, 'complete', told.failure_reason ?? '');
  assert.equal(told.values['energy_per_output_token_j'], null);
  study.tell(b.id, { state: 'complete', result: run(b.config) });
  assert.deepEqual(study.bestTrials().map((x) => x.id), [b.id], 'only the run with J/token is on the energy front');
});

test('recommend ranks by the upper bound of predicted J/token for tokens_per_joule, and says so', () => {
  const surrogate = priorSurrogate([], names);
  const base = { surrogate, context, encoder, source, slo: { ttft_p99_ms: 60_000 }, historyRuns: 0, rng: createRng(1), candidates: 300, keep: 300, minPMeetsSlo: 0 };
  const energy = recommend({ ...base, objectives: objectivesFor('tokens_per_joule') });
  assert.match(energy.rule, /^the lowest upper bound \(mean \+ 2σ\) of predicted joules per output token/);
  const goodput = recommend(base);
  assert.match(goodput.rule, /^the highest lower bound \(mean − 2σ\) of predicted output throughput per GPU/);
  const usd = recommend({ ...base, objective: 'usd_per_mtok' });
  assert.match(usd.rule, /^the fewest dollars per million output tokens/);
  assert.deepEqual(usd.best?.config, goodput.best?.config, 'dollars per token rank as goodput per GPU');
  // The prior's J/token is baseline × one shared factor: the pick has the lowest J/token baseline of the pool.
  const j = (r: typeof energy): number => r.best?.predicted.energy_per_output_token_j?.high ?? Number.NaN;
  for (const m of energy.pareto) assert.ok((m.predicted.energy_per_output_token_j?.high ?? 0) >= j(energy) * 0.99);
  // A model that predicts no energy cannot rank by it: the rule says so and falls back to throughput.
  const { energy_per_output_token_j: _drop, ...offsets } = surrogate.offsets ?? {};
  const blind = recommend({ ...base, surrogate: { ...surrogate, offsets }, objective: 'tokens_per_joule' });
  assert.match(blind.rule, /^joules per output token asked for, but the model predicts no energy/);
  assert.deepEqual(blind.best?.config, goodput.best?.config);
});
