import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CATALOG, LmBenchError, isLmBenchError, toLmBenchError, type ErrorCode } from '../src/errors.js';
import { renderErrorsDoc } from '../scripts/gen-errors-doc.js';

const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];

test('every code is LMB_ERR_*, and an error built from it carries the catalog entry', () => {
  for (const code of codes) {
    assert.match(code, /^LMB_ERR_[A-Z0-9_]+$/);
    const def = ERROR_CATALOG[code];
    const e = new LmBenchError(code, 'x');
    assert.equal(e.code, code);
    assert.equal(e.kind, def.kind);
    assert.equal(e.exitCode, def.exitCode);
    assert.equal(e.httpStatus, def.httpStatus);
    assert.ok(def.title.length > 10, `${code} has a title`);
  }
});

test('statuses follow the kinds: user errors are 4xx, unexpected ones 500 and exit 70', () => {
  for (const code of codes) {
    const d = ERROR_CATALOG[code];
    if (d.kind === 'user') assert.ok(d.httpStatus >= 400 && d.httpStatus < 500, code);
    if (d.kind === 'unexpected') assert.deepEqual([d.httpStatus, d.exitCode], [500, 70], code);
    assert.ok(d.exitCode !== 0, `${code} must not exit 0`);
  }
  assert.equal(ERROR_CATALOG.LMB_ERR_STARTUP_FAILED.exitCode, 3);
  assert.equal(ERROR_CATALOG.LMB_ERR_INVALID_ARGUMENT.exitCode, 2);
});

test('docs/errors.md is generated from the catalog and current', () => {
  const committed = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  assert.equal(committed, renderErrorsDoc(), 'run: node --import tsx scripts/gen-errors-doc.ts');
  for (const code of codes) assert.ok(committed.includes(`\`${code}\``), code);
});

test('foreign throwables become LMB_ERR_INTERNAL with the cause kept', () => {
  const cause = new TypeError('boom');
  const e = toLmBenchError(cause);
  assert.equal(e.code, 'LMB_ERR_INTERNAL');
  assert.equal(e.cause, cause);
  assert.ok(isLmBenchError(e, 'LMB_ERR_INTERNAL'));
  assert.ok(!isLmBenchError(e, 'LMB_ERR_NOT_FOUND'));
  const same = new LmBenchError('LMB_ERR_NOT_FOUND', 'n');
  assert.equal(toLmBenchError(same), same);
  assert.deepEqual(same.toJSON(), { code: 'LMB_ERR_NOT_FOUND', kind: 'user', message: 'n', details: {} });
});
