import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { COMMANDS } from '../../src/cli/registry.js';

/**
 * `lm-bench <command> --help` loads the command's usage text (src/cli/usage/) and not the command:
 * the text each registry entry loads is the command's own, and what a usage module imports, followed
 * through every file it reaches, stays clear of SQLite, fastify, piscina, XGBoost and the simulator.
 */
const SRC = join(PROJECT_ROOT, 'src');
const HEAVY = /from\s*['"](better-sqlite3|fastify|piscina|ml-xgboost|undici)['"]/;

function reached(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s*['"](\.[^'"]+)['"]/gm)) {
    reached(normalize(join(dirname(file), m[1] as string)).replace(/\.js$/, '.ts'), seen);
  }
  return seen;
}

test('each command --help prints the text the command itself carries', async () => {
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const [{ usage }, { command }] = await Promise.all([entry.usage(), entry.load()]);
    assert.equal(usage, command.usage, name);
    assert.match(usage, /lm-bench/, name);
  }
});

test('a usage module reaches a few light files, none importing a heavy package or the simulator', () => {
  for (const name of Object.keys(COMMANDS).filter((n) => n !== 'model')) {
    const files = [...reached(join(SRC, 'cli', 'usage', `${name}.ts`))];
    assert.ok(files.length <= 3, `${name}: ${files.map((f) => relative(SRC, f)).join(', ')}`);
    for (const f of files) {
      assert.doesNotMatch(readFileSync(f, 'utf8'), HEAVY, relative(SRC, f));
      assert.ok(!relative(SRC, f).startsWith('sim'), relative(SRC, f));
    }
  }
});
