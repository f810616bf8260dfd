import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../../src/catalog/index.js';
import { StudySpec, Workload, type Trial } from '../../../src/domain/index.js';
import { DEFAULT_SURROGATE_SPEC, type SurrogateSpec } from '../../../src/surrogate/index.js';
import { valuesFromResult } from '../../../src/optimize/study.js';
import { spaceSource } from '../../../src/optimize/space-source.js';
import { simulate } from '../../../src/sim/index.js';
import { loadSpace } from '../../../src/space/index.js';
import { openStore, type SqliteStore } from '../../../src/store/index.js';
import { featureContext, trialInputOf } from '../../../src/tune/study-runner.js';
import { recordTrialRun } from '../../../src/tune/history.js';
import { finalStudySurrogate } from '../../../src/tune/surrogate-model.js';
import { spaceEncoder } from '../../../src/optimize/space-source.js';
import { createRng } from '../../../src/util/rng.js';
import { loadYamlFile } from '../../../src/util/yaml.js';

/**
 * A real study in a real SQLite file, measured by the simulator in-process (what the sim target's
 * workers run), trial by trial as the tuning loop records them: vLLM's defaults, space-filling
 * configurations, one launch failure; plus a random-search study of the same deployment. When it ends
 * it saves its validated surrogate as `runStudy` does (a small spec, so the fixture takes seconds).
 */
export const SMALL_SURROGATE: SurrogateSpec = { ...DEFAULT_SURROGATE_SPEC, members: 3, xgb: { ...DEFAULT_SURROGATE_SPEC.xgb, rounds: 25, maxDepth: 3 } };

export interface Fixture {
  readonly store: SqliteStore;
  readonly dir: string;
  readonly spec: StudySpec;
}

export function specOf(name: string): StudySpec {
  const chat = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload, 'LMB_ERR_WORKLOAD_INVALID');
  return StudySpec.parse({
    name,
    space: join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'),
    hardware: { gpu: 'H100-SXM', count: 1 },
    model: 'llama-3.1-8b',
    workload: { ...chat, num_prompts: 120 },
    slo: { ttft_p99_ms: 350, itl_p99_ms: 50 },
    objectives: [
      { name: 'output_throughput_per_gpu', direction: 'maximize' },
      { name: 'ttft_p99_ms', direction: 'minimize' },
    ],
    target: JSON.stringify({ kind: 'sim' }),
    seed: 7,
    budget_trials: 10,
    budget_hours: null,
    parallel: 1,
    measure: 'fixed',
  });
}

function measure(store: SqliteStore, studyName: string, configs: readonly { config: Trial['config']; origin: Trial['origin'] }[]): void {
  const study = store.getStudy(studyName);
  for (const { config, origin } of configs) {
    const trial = store.createTrial(study.id, { config, origin, state: 'running' });
    const input = trialInputOf(study.spec, trial);
    const out = simulate({ config, hardware: input.hardware, model: input.model, workload: input.workload, seed: input.seed, slo: input.slo });
    const told = out.ok
      ? store.completeTrial(trial.id, { values: valuesFromResult(out.result, study.spec.objectives, study.spec.slo, study.spec.hardware.count), result: out.result })
      : store.failTrial(trial.id, { reason: `${out.failure.rule}: ${out.failure.message}`, started: false });
    recordTrialRun(store, study, told);
  }
}

export async function makeFixture(opts: { readonly trials?: number; readonly baseline?: boolean } = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-report-'));
  let clock = 1_700_000_000_000;
  const store = openStore(join(dir, 'db.sqlite'), { now: () => (clock += 1000) });
  const spec = specOf('fx');
  const space = loadSpace(spec.space);
  const source = spaceSource(space, featureContext(spec, defaultCatalog()));
  store.createStudy(spec);
  const n = opts.trials ?? 9;
  const picks = source.sample(n, createRng(11)).map((config) => ({ config, origin: 'space_filling' as const }));
  // A configuration that cannot start: the 8B model's weights leave no room for KV blocks at 20% memory.
  measure(store, 'fx', [{ config: {}, origin: 'default' }, ...picks, { config: { gpu_memory_utilization: 0.2 }, origin: 'enqueued' }]);
  store.setStudyState(store.getStudy('fx').id, 'done');
  if (opts.baseline !== false) {
    store.createStudy({ ...spec, name: 'fx-random' });
    measure(store, 'fx-random', [{ config: {}, origin: 'default' }, ...source.sample(6, createRng(99)).map((config) => ({ config, origin: 'random' as const }))]);
  }
  await finalStudySurrogate({ store, catalog: defaultCatalog(), encoder: spaceEncoder(space), gpu: spec.hardware.gpu, model: spec.model, study: 'fx', seed: spec.seed, spec: SMALL_SURROGATE });
  return { store, dir, spec };
}
