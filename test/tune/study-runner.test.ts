import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog, PROJECT_ROOT } from '../../src/catalog/index.js';
import { StudySpec, type ServerConfig } from '../../src/domain/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { loadSpace } from '../../src/space/index.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { runStudy } from '../../src/tune/study-runner.js';
import { specOf } from '../report/study/fixture.js';

/** What `tune --enqueue` refuses before anything is stored: configurations the study would not run as asked. */
const catalog = defaultCatalog();
const space = loadSpace(join(PROJECT_ROOT, 'search-spaces', 'vllm.yaml'));
// The report fixture's study (8B on one H100, chat, the simulator), its budget and settings as each case asks.
const spec = (name: string, extra: Partial<StudySpec> = {}): StudySpec => StudySpec.parse({ ...specOf(name), budget_trials: 1, ...extra });

test('--enqueue refuses what the study would not run as asked: against --keep-precision, or past its budget; nothing is stored', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-enqueue-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore(join(dir, 'h.db'));
  t.after(() => store.close());
  const run = (s: StudySpec, enqueue: ServerConfig[]) => runStudy({ store, catalog, space, spec: s, target: { kind: 'sim' }, now: Date.now, keepSurrogate: false, candidates: 500, enqueue });
  const refused = (pattern: RegExp) => (e: unknown) => isLmBenchError(e, 'LMB_ERR_INVALID_ARGUMENT') && pattern.test(String(e));

  await assert.rejects(run(spec('kp', { keep_precision: true }), [{ quantization: 'fp8' }]), refused(/--enqueue quantization=fp8: changes the model's numerics \(quantization=fp8\), which the study's --keep-precision rules out/));
  assert.equal(store.findStudy('kp'), null, 'a refused queue stores no study');

  // A study whose one trial is spent: the same queue again is nothing new; a new configuration would wait for ever.
  await run(spec('done'), []);
  const id = store.getStudy('done').id;
  const before = store.listTrials(id).length;
  await run(spec('done'), [{}]);
  await assert.rejects(run(spec('done'), [{ max_num_seqs: 64 }]), refused(/--enqueue max_num_seqs=64: study "done" has room for 0 more of its 1 trials, so 1 queued would never run; queue them in a new --study/));
  assert.equal(store.listTrials(id).length, before, 'no trial was added');
  // A new study's budget must hold vLLM's defaults and every queued configuration.
  await assert.rejects(run(spec('small', { budget_trials: 2 }), [{ max_num_seqs: 64 }, { max_num_seqs: 128 }]), refused(/--budget-trials 2 runs vLLM's defaults and 1 more, so 1 of the 2 queued would never run; give --budget-trials 3 or more/));
  assert.equal(store.findStudy('small'), null);
});
