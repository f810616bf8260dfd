import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec, type ServerConfig } from '../../src/domain/index.js';
import { configKey } from '../../src/optimize/sampler.js';
import { resolveConfig } from '../../src/physics/resolve.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { summarizeStudy } from '../../src/tune/summary.js';
import { randomSampler } from '../../src/optimize/samplers.js';
import { createOptimizationStudy } from '../../src/optimize/study.js';
import { simulate } from '../../src/sim/index.js';
import { createRng } from '../../src/util/rng.js';
import { source } from '../surrogate/fixtures.js';
import { specOf } from '../report/study/fixture.js';

/** vLLM's defaults left out (`{}`) and spelled out are one configuration: keyed once, run once. */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
const spec = (name: string, extra: Partial<StudySpec> = {}): StudySpec => StudySpec.parse({ ...specOf(name), ...extra });

test('configKey on a deployment is the config as vLLM resolves it there: {} and its defaults spelled out are one key', () => {
  const s = spec('keys');
  const deployment = { hardware: catalog.gpu(s.hardware.gpu), model: catalog.model(s.model) };
  const spelled: ServerConfig = resolveConfig({}, deployment.hardware, deployment.model);
  assert.ok(Object.keys(spelled).length > 0);
  assert.equal(configKey(spelled, deployment), configKey({}, deployment));
  // One default spelled out, the rest left to vLLM.
  assert.equal(configKey({ block_size: spelled.block_size ?? 0 }, deployment), configKey({}, deployment));
  // A value that is not the default is still another configuration.
  assert.notEqual(configKey({ max_num_seqs: (spelled.max_num_seqs ?? 0) / 2 }, deployment), configKey({}, deployment));
  // The default depends on the GPU (batch defaults), so the key does too: 1024 sequences is the default on an H100, not on an A100.
  const a100 = { hardware: catalog.gpu('A100-80GB'), model: deployment.model };
  assert.notEqual(configKey({ max_num_seqs: spelled.max_num_seqs ?? 0 }, a100), configKey({}, a100));
  // Without a deployment knobs are compared as written.
  assert.notEqual(configKey(spelled), configKey({}));
});

test('a study runs vLLM\'s defaults once, however they are written: queued spelled out, they are the defaults trial', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-config-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const s = spec('defaults-once', { budget_trials: 2 });
  const hw = catalog.gpu(s.hardware.gpu);
  const model = catalog.model(s.model);
  const spelled: ServerConfig = resolveConfig({}, hw, model);
  await runStudy({ store, catalog, space, spec: s, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 500, enqueue: [spelled] });
  const trials = store.listTrials(store.getStudy('defaults-once').id);
  assert.equal(trials.length, 2);
  const resolved = trials.map((tr) => JSON.stringify(resolveConfig(tr.config, hw, model)));
  assert.equal(new Set(resolved).size, trials.length, `two trials run one configuration: ${JSON.stringify(trials.map((tr) => [tr.origin, tr.config]))}`);
  assert.deepEqual(trials.find((tr) => tr.origin === 'default')?.config, {});
});

test('the summary, given the study\'s GPU, takes vLLM\'s defaults spelled out for a repeat of {}', async () => {
  let now = 0;
  const store = openStore(':memory:', { now: () => ++now });
  const s = spec('summary-keys', { budget_trials: 4, workload: { ...specOf('summary-keys').workload, num_prompts: 40 } });
  const hw = catalog.gpu(s.hardware.gpu);
  const model = catalog.model(s.model);
  const study = createOptimizationStudy(store, s, randomSampler(source), createRng(1));
  study.enqueue({});
  study.enqueue(resolveConfig({}, hw, model));
  for (const [i, tr] of (await study.ask(2)).entries()) {
    const out = simulate({ config: tr.config, hardware: s.hardware, model: s.model, workload: s.workload, seed: i + 1, catalog });
    assert.ok(out.ok);
    study.tell(tr.id, { state: 'complete', result: out.result });
  }
  const summary = (hardware?: typeof hw) => summarizeStudy({ study: study.study, trials: study.trials(), front: study.bestTrials(), model, stopReason: null, ...(hardware === undefined ? {} : { hardware }) });
  assert.equal(summary().noise.source, 'default', 'as written: two configurations, no repeat');
  const one = summary(hw);
  assert.equal(one.noise.source, 'repeats', 'resolved on the GPU: one configuration measured twice');
  assert.equal(one.noise.dof, 1);
  store.close();
});
