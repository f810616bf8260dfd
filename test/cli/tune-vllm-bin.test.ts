import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/sqlite-store.js';
import { captureIo, runCli } from '../helpers/cli.js';

// `tune --target vllm` with a vLLM that is not there: refused before any trial, the study never stored
// (it used to run every trial into spawn's exit 127 and call them failures of unknown class).

const WORKLOAD = fileURLToPath(new URL('../../data/workloads/chat.yaml', import.meta.url));
const tune = (db: string, extra: string[]): string[] => ['tune', '--study', 'nobin', '--gpu', 'H100-SXM', '--gpus', '1', '--model', 'llama-3.1-8b', '--workload', WORKLOAD, '--budget-trials', '2', '--target', 'vllm', '--no-report', '--db', db, ...extra];

const noStudy = (db: string): void => {
  const s = openStore(db, { readonly: true });
  try {
    assert.equal(s.findStudy('nobin'), null);
  } finally {
    s.close();
  }
};

test('tune --target vllm --vllm-bin /nonexistent/vllm: an error naming the flag and the path, no study', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-vllm-bin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'h.db');
  const io = captureIo(dir);
  assert.equal(await main(tune(db, ['--vllm-bin', '/nonexistent/vllm']), io), 2, io.out());
  assert.match(io.err(), /LMB_ERR_FILE_NOT_FOUND: --vllm-bin \/nonexistent\/vllm: no such file/);
  assert.doesNotMatch(io.err() + io.out(), /trial 0/);
  noStudy(db);
});

test('tune --target vllm without vllm on PATH: the bare name and the PATH searched are named', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-tune-vllm-path-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const empty = join(dir, 'bin');
  mkdirSync(empty);
  const db = join(dir, 'h.db');
  const r = await runCli(tune(db, []), { cwd: dir, env: { PATH: empty } });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`LMB_ERR_FILE_NOT_FOUND: --vllm-bin vllm: no \`vllm\` on PATH \\(${empty.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)`));
  noStudy(db);
});
