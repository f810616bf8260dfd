import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEPRECATION_NOTE } from '../../src/cli/commands/model.js';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';
import { seededDb } from './seeded-history.js';

const TRAIN = ['--folds', '0', '--members', '2', '--rounds', '10', '--threads', '0', '--seed', '1', '--json'];

interface Trained {
  surrogate_id: number;
  rows: number;
  targets: string[];
  metrics: unknown;
}

test('surrogate train|eval is the command: --help lists it, and `model` only as the deprecated alias', async () => {
  const help = captureIo();
  assert.equal(await main(['--help'], help), 0);
  assert.match(help.out(), /^ {2}surrogate +surrogate models: `surrogate train` and `surrogate eval`/m);
  assert.match(help.out(), /^ {2}model +deprecated: the old name of `surrogate`/m);
  const usage = captureIo();
  assert.equal(await main(['surrogate', '--help'], usage), 0);
  assert.match(usage.out(), /lm-bench surrogate train \[--db PATH\]/);
  assert.match(usage.out(), /lm-bench surrogate eval {2}\[--db PATH\]/);
  const bad = captureIo();
  assert.equal(await main(['surrogate', 'fit'], bad), 2);
  assert.match(bad.err(), /LMB_ERR_INVALID_ARGUMENT: unknown subcommand "surrogate fit"/);
  assert.ok(!bad.err().includes(DEPRECATION_NOTE), 'the new name prints no deprecation note');
});

test('model train|eval still works as a deprecated alias: the same result on stdout, one note on stderr only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-surrogate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = seededDb(dir, 10);
  const now = captureIo(dir);
  assert.equal(await main(['surrogate', 'train', '--db', db, ...TRAIN], now), 0, now.err());
  assert.equal(now.err(), '', 'the new name prints no note');
  const old = captureIo(dir);
  assert.equal(await main(['model', 'train', '--db', db, ...TRAIN], old), 0, old.err());
  assert.equal(old.err(), DEPRECATION_NOTE, 'exactly the one note, on stderr');
  assert.match(DEPRECATION_NOTE, /^lm-bench: `model train\|eval` is deprecated .*use `lm-bench surrogate train\|eval`\n$/);
  // stdout is the JSON document alone: the note never reaches it.
  const a = JSON.parse(now.out()) as Trained;
  const b = JSON.parse(old.out()) as Trained;
  assert.equal(b.surrogate_id, a.surrogate_id + 1, 'the alias trained and saved a model too');
  assert.deepEqual([b.rows, b.targets, b.metrics], [a.rows, a.targets, a.metrics], 'same store, same seed: the same fit');
  // Its errors are the command's, with the note first on stderr and a parseable error on stdout.
  const evalOld = captureIo(dir);
  assert.equal(await main(['model', 'eval', '--db', db, '--folds', '1', '--json'], evalOld), 2);
  assert.ok(evalOld.err().startsWith(DEPRECATION_NOTE));
  assert.equal((JSON.parse(evalOld.out()) as { error: { code: string } }).error.code, 'LMB_ERR_INVALID_ARGUMENT');
  // A mistake under the old name is echoed as typed, not as the new name.
  const typo = captureIo(dir);
  assert.equal(await main(['model', 'fit'], typo), 2);
  assert.match(typo.err(), /^lm-bench: `model train\|eval` is deprecated[^\n]*\nlm-bench: error LMB_ERR_INVALID_ARGUMENT: unknown subcommand "model fit"/);
  const usage = captureIo();
  assert.equal(await main(['model', '--help'], usage), 0);
  assert.match(usage.out(), /^Deprecated: `lm-bench model` is now `lm-bench surrogate`\.\n/);
});
