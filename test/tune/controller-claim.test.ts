import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec } from '../../src/domain/index.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { earlierRunMs } from '../../src/tune/controller-claim.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';

const HOUR_MS = 3_600_000;

test('earlierRunMs: an ended controller counts to its end, a killed one to the last thing it recorded', () => {
  let clock = 0;
  const store = openStore(':memory:', { now: () => clock });
  const id = store.createStudy(StudySpec.parse({ ...specOf('clock'), budget_trials: 5 })).id;
  assert.equal(earlierRunMs(store, id), 0, 'never run');
  // Killed: started at 1 s, its last trial finished at 5 s, no end recorded.
  clock = 1_000;
  store.appendEvent({ studyId: id, kind: 'controller', payload: { pid: 1 } });
  clock = 5_000;
  store.appendEvent({ studyId: id, kind: 'trial_finished', payload: { trial_id: 1, state: 'complete' } });
  // Resumed at 100 s, ended at 160 s.
  clock = 100_000;
  const second = store.appendEvent({ studyId: id, kind: 'controller', payload: { pid: 2 } });
  clock = 160_000;
  store.appendEvent({ studyId: id, kind: 'controller_ended', payload: { controller: second.id } });
  assert.equal(earlierRunMs(store, id), 4_000 + 60_000);
  store.close();
});

test('--budget-hours is the study\'s running time: a resume after the budget was spent runs nothing more', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-budget-hours-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let clock = Date.now() - 3 * HOUR_MS;
  const store = openStore(join(dir, 'h.db'), { now: () => clock });
  t.after(() => store.close());
  const spec = StudySpec.parse({ ...specOf('hours'), budget_trials: 5, budget_hours: 1 });
  // An earlier run of the study, killed after two hours of trials.
  const id = store.createStudy(spec).id;
  store.appendEvent({ studyId: id, kind: 'controller', payload: { pid: 1 } });
  clock += 2 * HOUR_MS;
  store.appendEvent({ studyId: id, kind: 'trial_finished', payload: { trial_id: 0, state: 'failed' } });
  clock = Date.now();
  const { summary } = await runStudy({ store, catalog: defaultCatalog(), space: loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml')), spec, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 200 });
  assert.equal(summary.reason, 'time');
  assert.equal(store.listTrials(id).filter((tr) => tr.state === 'complete').length, 0, 'no trial ran past the spent budget');
});
