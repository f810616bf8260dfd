import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';

// Loading ml-xgboost in a fresh process: a booster trains and predicts, and stderr stays empty. Its
// Emscripten loader once printed "wasm streaming compile failed … falling back to ArrayBuffer
// instantiation" on every command that fitted or loaded a model; the instantiateStreaming it tries is
// put back afterwards for everything else.
test('ml-xgboost loads without a line on stderr, and WebAssembly.instantiateStreaming is left as it was', () => {
  const xgb = pathToFileURL(join(PROJECT_ROOT, 'src', 'surrogate', 'xgb.ts')).href;
  const script = [
    `const { trainBooster } = await import(${JSON.stringify(xgb)});`,
    'const before = WebAssembly.instantiateStreaming;',
    'const b = await trainBooster([[1], [2], [3], [4]], [1, 2, 3, 4], { rounds: 5, maxDepth: 2 });',
    'const [lo, hi] = b.predict([[1], [4]]);',
    'b.free();',
    'console.log(JSON.stringify({ lo, hi, kept: WebAssembly.instantiateStreaming === before && typeof before === "function" }));',
  ].join('\n');
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stderr, '', 'nothing on stderr');
  const out = JSON.parse(child.stdout.trim()) as { lo: number; hi: number; kept: boolean };
  assert.ok(out.hi > out.lo, `the trees learned the slope: ${out.lo} at 1, ${out.hi} at 4`);
  assert.equal(out.kept, true);
});
