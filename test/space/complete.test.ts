import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSpace } from '../../src/space/index.js';
import { ctxOf } from './helpers.js';

test('a conditional knob whose default names a symbol, switched on by the config, takes the symbol value', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'lmb-space-complete-')), 'cond-symbol.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'symbols:',
      '  native: { expr: model.native_context }',
      'knobs:',
      '  enforce_eager: { type: bool, default: false }',
      '  max_model_len: { type: int, low: 2048, high: 131072, grid: [2048, native], default: native, when: config.enforce_eager }',
      '',
    ].join('\n'),
  );
  const s = loadSpace(file);
  const ctx = ctxOf('H100-SXM', 1, 'llama-3.1-8b');
  // Inactive under the defaults, so complete() fills it itself: it wrote the string "native".
  assert.equal(s.defaultsFor(ctx).max_model_len, undefined);
  assert.deepEqual(s.complete({ enforce_eager: true }, ctx), { enforce_eager: true, max_model_len: ctx.model.native_context });
  assert.deepEqual(s.isFeasible({ enforce_eager: true }, ctx), { ok: true });
});
