import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Question } from '../../src/advise/answer.js';
import { Workload } from '../../src/domain/index.js';
import { createRecommender } from '../../src/http/recommender.js';
import { SURROGATE_KIND } from '../../src/surrogate/registry.js';
import { openStore } from '../../src/store/index.js';
import { loadYamlFile } from '../../src/util/yaml.js';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { seedTrainedDb, SPACE_PATH, tempDb } from './helpers.js';

test('a study’s fit is stood in for by the last answer until its own is computed; a first answer, or a model trained outside a study, is waited for', { timeout: 120_000 }, async (t) => {
  const db = tempDb(t);
  await seedTrainedDb(db);
  const store = openStore(db);
  const rec = createRecommender({ store, dbPath: db, spacePath: SPACE_PATH, threads: 1, now: () => Date.now() });
  t.after(async () => {
    await rec.close();
    store.close();
  });
  const trained = store.getModel(1);
  // Copies of the trained surrogate saved as a study would save its refits (into its slot), or as `surrogate train` does.
  const save = (slot?: string): number => store.saveModel({ kind: SURROGATE_KIND, blob: trained.blob, metadata: trained.metadata, metrics: trained.metrics, ...(slot === undefined ? {} : { slot }) }).id;
  const workload = loadYamlFile(join(PROJECT_ROOT, 'data', 'workloads', 'chat.yaml'), Workload);
  const q: Question = { gpu: 'H100-SXM', gpus: 1, model: 'llama-3.1-8b', workload, workloadRef: 'chat', slo: workload.slo ?? {}, candidates: 300, seed: 1, keepPrecision: false };
  const ask = async (): Promise<number | null> => (await rec.ask(q)).answer.surrogate_id;
  const waitForModel = async (id: number): Promise<void> => {
    const deadline = Date.now() + 60_000;
    let answeredBy = await ask();
    while (answeredBy !== id && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      answeredBy = await ask();
    }
    assert.equal(answeredBy, id);
  };

  assert.equal(await ask(), 1, 'a question never answered is waited for');
  const first = save('study:s');
  rec.invalidate();
  assert.equal(await ask(), 1, 'the study’s fit has no answer yet: the last answer stands in');
  await waitForModel(first);
  const refit = save('study:s');
  rec.invalidate();
  assert.equal(await ask(), first, 'the refit’s answer is not ready: its predecessor answers');
  // Once the refit's own answer is computed, it answers.
  await waitForModel(refit);
  // A model outside the slot (trained by hand) is never stood in for.
  const manual = save();
  rec.invalidate();
  assert.equal(await ask(), manual);
});
