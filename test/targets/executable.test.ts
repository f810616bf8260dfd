import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLmBenchError } from '../../src/errors.js';
import { assertVllmExecutable, findExecutable } from '../../src/targets/executable.js';

// The vllm target's executable, found as spawn finds it (a path, or a bare name on PATH), on real files.

const fakeVllm = fileURLToPath(new URL('../fixtures/targets/vllm', import.meta.url));

test('findExecutable: a path or a name on PATH, and why not when it cannot be started', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-executable-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const plain = join(dir, 'plain');
  writeFileSync(plain, '#!/bin/sh\n');
  chmodSync(plain, 0o644);
  mkdirSync(join(dir, 'sub'));
  assert.deepEqual(findExecutable(fakeVllm, {}), { ok: true, path: fakeVllm });
  assert.deepEqual(findExecutable('vllm', { PATH: `${dir}${delimiter}${dirname(fakeVllm)}` }), { ok: true, path: fakeVllm });
  assert.deepEqual(findExecutable(join(dir, 'nope'), {}), { ok: false, why: 'missing', path: join(dir, 'nope') });
  assert.deepEqual(findExecutable('vllm', { PATH: dir }), { ok: false, why: 'missing', path: null });
  assert.deepEqual(findExecutable('vllm', {}), { ok: false, why: 'missing', path: null });
  assert.deepEqual(findExecutable(join(dir, 'sub'), {}), { ok: false, why: 'not-executable', path: join(dir, 'sub') });
  // Root may execute anything: the permission case holds only for an ordinary user.
  if (process.getuid?.() !== 0) assert.deepEqual(findExecutable('plain', { PATH: dir }), { ok: false, why: 'not-executable', path: plain });
});

test('assertVllmExecutable: the message names --vllm-bin, the path, and PATH for a bare name', () => {
  const refused = (name: string, env: Record<string, string>): { code: string; message: string } => {
    try {
      assertVllmExecutable(name, env);
    } catch (err) {
      assert.ok(isLmBenchError(err));
      return { code: err.code, message: err.message };
    }
    return assert.fail(`${name} was accepted`);
  };
  const missing = refused('/nonexistent/vllm', {});
  assert.equal(missing.code, 'LMB_ERR_FILE_NOT_FOUND');
  assert.match(missing.message, /^--vllm-bin \/nonexistent\/vllm: no such file;/);
  const bare = refused('vllm', { PATH: '/nonexistent/bin' });
  assert.equal(bare.code, 'LMB_ERR_FILE_NOT_FOUND');
  assert.match(bare.message, /^--vllm-bin vllm: no `vllm` on PATH \(\/nonexistent\/bin\)/);
  const dir = refused(dirname(fakeVllm), {});
  assert.equal(dir.code, 'LMB_ERR_INVALID_ARGUMENT');
  assert.match(dir.message, /is not an executable file/);
  assert.equal(assertVllmExecutable('vllm', { PATH: dirname(fakeVllm) }), fakeVllm);
});
