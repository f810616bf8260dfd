import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { captureIo } from '../helpers/cli.js';

test('demo --out naming a file is refused before the study runs: exit 2, no history written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-demo-out-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'report-here');
  writeFileSync(file, 'x');
  const db = join(dir, 'demo.db');
  const io = captureIo(dir);
  const status = await main(['demo', '--out', file, '--db', db, '--trials', '1'], io);
  assert.equal(status, 2, io.err());
  assert.match(io.err(), /--out .*report-here: is a file, not a directory/);
  assert.equal(existsSync(db), false, 'no study was run or stored');
});
