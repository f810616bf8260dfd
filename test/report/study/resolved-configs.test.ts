import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../../src/catalog/index.js';
import type { ServerConfig, StudySpec, Trial } from '../../../src/domain/index.js';
import { resolveConfig } from '../../../src/physics/resolve.js';
import { valuesFromResult } from '../../../src/optimize/study.js';
import { analyzeStudy, latencyCandidates } from '../../../src/report/study/analysis.js';
import { buildParetoData } from '../../../src/report/study/data/pareto.js';
import { simulate } from '../../../src/sim/index.js';
import { loadSpace } from '../../../src/space/index.js';
import { openStore, type SqliteStore } from '../../../src/store/index.js';
import { trialInputOf } from '../../../src/tune/study-runner.js';
import { specOf } from './fixture.js';

/**
 * The report groups configurations as the tuner and the summary do: as vLLM resolves them on the
 * study's GPU and model, so `{}` and vLLM's defaults spelled out are one configuration measured twice;
 * and vLLM's defaults are found by their configuration, not by a `default` trial a crash left failed.
 */
const catalog = defaultCatalog();

function setUp(t: TestContext, name: string): { store: SqliteStore; spec: StudySpec; studyId: number } {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-report-keys-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let clock = 1_700_000_000_000;
  const store = openStore(join(dir, 'db.sqlite'), { now: () => (clock += 1000) });
  t.after(() => store.close());
  const base = specOf(name);
  // A loose SLO: every run meets it, so the throughputs alone rank the configurations.
  const spec: StudySpec = { ...base, workload: { ...base.workload, num_prompts: 40 }, slo: { ttft_p99_ms: 600_000 } };
  return { store, spec, studyId: store.createStudy(spec).id };
}

/** Measures a running trial on the simulator, at the output throughput given (what ranks it). */
function complete(store: SqliteStore, spec: StudySpec, trial: Trial, tokS: number): void {
  const input = trialInputOf(spec, trial);
  const out = simulate({ config: trial.config, hardware: input.hardware, model: input.model, workload: input.workload, seed: input.seed, catalog });
  assert.ok(out.ok, JSON.stringify(trial.config));
  const result = { ...out.result, output_throughput: tokS };
  store.completeTrial(trial.id, { values: valuesFromResult(result, spec.objectives, spec.slo, spec.hardware.count), result });
}

const analyze = (store: SqliteStore, name: string, spec: StudySpec) =>
  analyzeStudy(store, name, { catalog, space: loadSpace(spec.space), withModel: false, withLatency: false, withExplanation: false, withPrune: false });

test('the report takes vLLM\'s defaults spelled out for a second measurement of {}: one configuration in the summary and the Pareto plot', (t) => {
  const { store, spec, studyId } = setUp(t, 'spelled-defaults');
  const spelled: ServerConfig = resolveConfig({}, catalog.gpu(spec.hardware.gpu), catalog.model(spec.model));
  assert.ok(Object.keys(spelled).length > 0);
  const runs: [ServerConfig, Trial['origin'], number][] = [
    [{}, 'default', 1000],
    [spelled, 'enqueued', 1010],
    [{ ...spelled, max_num_seqs: 64 }, 'space_filling', 3000],
  ];
  for (const [config, origin, tokS] of runs) complete(store, spec, store.createTrial(studyId, { config, origin, state: 'running' }), tokS);
  store.setStudyState(studyId, 'done');

  const a = analyze(store, 'spelled-defaults', spec);
  // Two measurements of one configuration are the study's one repeat.
  assert.equal(a.summary.noise.source, 'repeats');
  assert.equal(a.summary.noise.dof, 1);
  assert.equal(a.summary.recommendation?.trial, 2);
  assert.equal(a.summary.recommendation?.vs_default.default_trial, 0);
  // The gain is over the defaults' mean (1005 tok/s), not over one of their two runs.
  assert.ok(Math.abs((a.summary.recommendation?.vs_default.throughput_gain_pct ?? 0) - (3000 / 1005 - 1) * 100) < 1e-6);
  const points = buildParetoData(a, 'ttft').points.filter((p) => p.kind === 'measured');
  assert.deepEqual(
    points.map((p) => (p.kind === 'measured' ? [p.trial, p.runs] : null)),
    [
      [0, [0, 1]],
      [2, [2]],
    ],
  );
});

test('after a crash, the report draws vLLM\'s defaults from their re-run, not the orphaned `default` trial', (t) => {
  const { store, spec, studyId } = setUp(t, 'orphaned-defaults');
  // The defaults' trial is running when the controller dies: the resume fails it as stale and runs it again.
  const crashed = store.createTrial(studyId, { config: {}, origin: 'default', state: 'running' });
  const { requeued } = store.requeueStaleTrials(studyId, Number.MAX_SAFE_INTEGER);
  assert.equal(requeued.length, 1);
  const rerun = requeued[0] as Trial;
  assert.equal(rerun.origin, 'enqueued');
  store.startTrial(rerun.id);
  complete(store, spec, store.getTrial(rerun.id), 1000);
  // Three configurations better than the defaults fill the latency plot's top places.
  for (const [i, n] of [64, 128, 256].entries()) complete(store, spec, store.createTrial(studyId, { config: { max_num_seqs: n }, origin: 'space_filling', state: 'running' }), 2000 + i * 1000);
  store.setStudyState(studyId, 'done');

  const a = analyze(store, 'orphaned-defaults', spec);
  assert.equal(a.trials.find((x) => x.id === crashed.id)?.state, 'failed');
  assert.equal(a.summary.recommendation?.vs_default.default_trial, rerun.number);
  const c = latencyCandidates(spec, a.trials, a.deployment);
  assert.equal(c.length, 4, JSON.stringify(c.map((x) => x.label)));
  const last = c[3];
  assert.deepEqual([last?.label, last?.trial.id], [`vLLM defaults (trial ${rerun.number})`, rerun.id]);
});
