import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/index.js';
import { captureIo } from '../helpers/cli.js';
import { seededDb } from './seeded-history.js';

const FAST = ['--members', '2', '--rounds', '10', '--threads', '0', '--seed', '1', '--json'];

test('surrogate eval --folds 2 on a history its own check accepts validates, not fails on a thin fold', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // 12 measured runs pass eval's "at least max(8, 2 × 4)" check; each 2-fold training half holds 6,
  // below the 8 a fit needs: that fold trains its trees on the 6 it has.
  const db = seededDb(dir, 12);
  const io = captureIo(dir);
  assert.equal(await main(['surrogate', 'eval', '--db', db, '--folds', '2', ...FAST], io), 0, io.out() + io.err());
  const report = JSON.parse(io.out()) as { folds: number; rows: number; targets: Record<string, { n: number }> };
  assert.equal(report.folds, 2);
  assert.equal(report.rows, 12);
  assert.equal(report.targets['output_throughput']?.n, 12, 'every run scored once');
});

test('surrogate train --folds 1 is refused: one fold holds nothing out', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = seededDb(dir, 10);
  const io = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, '--folds', '1', ...FAST], io), 2);
  const err = (JSON.parse(io.out()) as { error: { code: string; message: string } }).error;
  assert.equal(err.code, 'LMB_ERR_INVALID_ARGUMENT');
  assert.match(err.message, /--folds must be 0 \(no validation\) or ≥ 2/);
  const store = openStore(db);
  try {
    assert.equal(store.listModels('surrogate').length, 0, 'nothing was trained or saved');
  } finally {
    store.close();
  }
});

test('surrogate train says when the history was too thin for the validation asked for', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = seededDb(dir, 10);
  const text = ['--members', '2', '--rounds', '10', '--threads', '0', '--seed', '1'];
  const thin = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, '--folds', '5', ...text], thin), 0, thin.err());
  assert.match(thin.out(), /^saved surrogate #1 .* trained on 10 rows/);
  assert.match(thin.out(), /\nnot validated: 10 measured runs; 5-fold validation needs at least 15 \(--folds 0 skips it\)\n$/);
  const skipped = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, '--folds', '0', ...text], skipped), 0, skipped.err());
  assert.doesNotMatch(skipped.out(), /not validated/, '--folds 0 asked for no validation');
});

test('surrogate train|eval on a --db path that does not exist: an error naming it, and no file left behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const sub of ['train', 'eval']) {
    const db = join(dir, 'sub', `typo-${sub}.db`);
    const io = captureIo(dir);
    assert.equal(await main(['surrogate', sub, '--db', db, ...FAST], io), 2);
    const err = (JSON.parse(io.out()) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'LMB_ERR_FILE_NOT_FOUND');
    assert.ok(err.message.includes(db), err.message);
    assert.equal(existsSync(db), false, `${sub} created no store at the mistyped path`);
  }
});

test('surrogate train says how many stored runs it left out, as its --json does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = seededDb(dir, 10);
  // Two runs whose result names no workload (an ingested file that had none): nothing to featurize.
  const store = openStore(db, { now: () => 2 });
  const run = store.listRuns({})[0];
  assert.ok(run !== undefined);
  for (const salt of ['a', 'b']) {
    store.storeRuns([{ result: { ...run.result, workload: null }, serverConfig: run.server_config, hardware: run.hardware, model: run.model, workload: null, sourceFormat: 'lm_bench', sourcePath: null, contentHash: createHash('sha256').update(salt).digest('hex') }]);
  }
  store.close();
  const text = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, '--folds', '0', '--members', '2', '--rounds', '10', '--threads', '0'], text), 0, text.err());
  assert.match(text.out(), /trained on 10 rows;.*\nleft out of training: 2 stored runs without a workload\n$/);
  const json = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, '--folds', '0', ...FAST], json), 0, json.err());
  assert.deepEqual((JSON.parse(json.out()) as { skipped: unknown }).skipped, { no_workload: 2, unknown_context: 0 });
});

test('surrogate eval counts runs with figures: runs whose every request failed are not "measured" toward its minimum', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-folds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = seededDb(dir, 9);
  const store = openStore(db, { now: () => 2 });
  const runs = store.listRuns();
  for (let i = 0; i < 3; i++) {
    const r = runs[i];
    assert.ok(r !== undefined);
    // The same deployment, every request failed: the server started and broke under the load.
    const result = { ...r.result, completed: 0, failed: 64, output_throughput: 0, request_throughput: 0, total_output_tokens: 0 };
    store.storeRuns([{ result, serverConfig: r.server_config, hardware: r.hardware, model: r.model, workload: r.workload, sourceFormat: 'lm_bench', sourcePath: null, contentHash: createHash('sha256').update(`failed-${i}`).digest('hex') }]);
  }
  store.close();
  const io = captureIo(dir);
  // 9 runs with figures (12 rows): below 3-fold eval's 12.
  assert.equal(await main(['surrogate', 'eval', '--db', db, '--folds', '3', ...FAST], io), 2, io.out() + io.err());
  assert.match(io.out() + io.err(), /9 measured runs in the store; 3-fold validation needs at least 12/);
});
