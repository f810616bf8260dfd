import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { PROJECT_ROOT } from '../src/catalog/index.js';

/**
 * The layering docs/architecture.md describes, enforced: a folder of src/ may import only from
 * folders of lower layers (and from itself), and no two files import each other, directly or round a
 * longer loop. A new folder must be placed in a layer here before anything may import it.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors'],
  ['util', 'workers'],
  ['domain'],
  ['catalog', 'metrics', 'workload', 'trace', 'physics', 'diagnose'],
  ['sim', 'loadgen', 'space', 'store', 'cost'],
  ['surrogate', 'ingest', 'calibration', 'export'],
  ['optimize'],
  ['targets'],
  ['tune', 'advise'],
  ['plan'],
  ['report'],
  ['http'],
  ['cli'],
];

const SRC = join(PROJECT_ROOT, 'src');
const layerOf = new Map<string, number>(LAYERS.flatMap((names, i) => names.map((n) => [n, i] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|mjs)$/.test(e.name) ? [p] : [];
  });
}

/** Relative specifiers of static imports, re-exports and literal dynamic imports. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'";]*?from\s*['"](\.[^'"]+)['"]/gm)) out.push(m[1] as string);
  for (const m of text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(m[1] as string);
  return out;
}

const moduleOf = (file: string): string => {
  const top = relative(SRC, file).split(/[\\/]/)[0] ?? '';
  return top.replace(/\.(ts|mjs)$/, '');
};
const resolveSpec = (from: string, spec: string): string => normalize(join(dirname(from), spec)).replace(/\.js$/, '.ts');

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f).map((s) => resolveSpec(f, s))]));

test('every folder of src/ sits in a layer', () => {
  const unplaced = [...new Set(files.map(moduleOf))].filter((m) => !layerOf.has(m));
  assert.deepEqual(unplaced, [], `place these in LAYERS (and docs/architecture.md): ${unplaced.join(', ')}`);
});

test('imports only go down the layers', () => {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = moduleOf(file);
    for (const target of targets) {
      if (!target.startsWith(SRC)) continue;
      const to = moduleOf(target);
      if (to === from) continue;
      if ((layerOf.get(to) ?? Infinity) >= (layerOf.get(from) ?? -1)) wrong.push(`${relative(PROJECT_ROOT, file)} → ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('no import cycles between files', () => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]): void => {
    state.set(f, 'open');
    for (const t of graph.get(f) ?? []) {
      if (!graph.has(t)) continue;
      if (state.get(t) === 'open') cycles.push([...path.slice(path.indexOf(t)), t].map((p) => relative(SRC, p)).join(' → '));
      else if (state.get(t) === undefined) visit(t, [...path, t]);
    }
    state.set(f, 'done');
  };
  for (const f of files) if (state.get(f) === undefined) visit(f, [f]);
  assert.deepEqual(cycles, []);
});

test('optimize is pure: it imports no simulator, store, calibration or Node built-in at run time (types only)', () => {
  // The search and recommendation core is handed a simulate function and a store; building them (a
  // profile read from the history, a simulator run) is calibration's and the callers' job.
  const impure: string[] = [];
  for (const file of files.filter((f) => moduleOf(f) === 'optimize')) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?from\s*['"]([^'"]+)['"]/gm)) {
      const spec = m[1] as string;
      const to = spec.startsWith('.') ? moduleOf(resolveSpec(file, spec)) : spec;
      if (['sim', 'store', 'calibration', 'targets', 'http'].includes(to) || to.startsWith('node:')) impure.push(`${relative(PROJECT_ROOT, file)} → ${spec}`);
    }
  }
  assert.deepEqual(impure, []);
});

test('the checker sees imports: a known edge is found', () => {
  // Guards the regexes above: if they stopped matching, the two tests before would pass vacuously.
  const sim = join(SRC, 'sim', 'simulate.ts');
  assert.ok((graph.get(sim) ?? []).includes(join(SRC, 'physics', 'startup.ts')));
});
