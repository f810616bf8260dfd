import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';

/**
 * A deployment no configuration of the space can start on (the model's weights alone outgrow the GPU):
 * the memory rules, which the space's sampling skips, leave nothing. Refused before a study is stored,
 * naming the memory rule, not a study that runs no trial and stops "exhausted" with advice to give it
 * more trials.
 */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));

test('a space where nothing can start (70B on one L4) is refused before a study is stored, naming the memory rule', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-infeasible-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const spec = StudySpec.parse({ ...specOf('nothing-fits'), hardware: { gpu: 'L4', count: 1 }, model: 'llama-3.1-70b', budget_trials: 4 });
  await assert.rejects(
    runStudy({ store, catalog, space, spec, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 500 }),
    (e: unknown) => isLmBenchError(e, 'LMB_ERR_SPACE_EMPTY') && /llama-3\.1-70b on 1× L4/.test(String(e)) && /C12 \(/.test(String(e)),
  );
  assert.equal(store.findStudy('nothing-fits'), null, 'no study stored');
});
