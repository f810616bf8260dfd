import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchorsOf, brokenLinks } from '../helpers/markdown.js';

// Every citation in code and data resolves in a fresh clone: a comment cites a section of
// docs/references/ (the upstream facts in the project's own words) or the upstream source itself,
// never the research notes the project was started from, which a clone does not have (issue 27 §7).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REFS = join(ROOT, 'docs', 'references');
const SCANNED = ['src', 'test', 'scripts', 'bench', 'data', 'search-spaces'];
const TEXT = /\.(?:ts|mts|mjs|js|ya?ml)$/;
const SELF = relative(ROOT, fileURLToPath(import.meta.url));

/** The scanned files (relative to the root) with their text; vendored fixtures hold no citations. */
function sources(): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (name !== 'node_modules' && name !== 'fixtures') walk(p);
      } else if (TEXT.test(name)) {
        const file = relative(ROOT, p);
        if (file !== SELF) out.push({ file, text: readFileSync(p, 'utf8') });
      }
    }
  };
  for (const d of SCANNED) if (existsSync(join(ROOT, d))) walk(join(ROOT, d));
  return out;
}

const files = sources();
const lineOf = (text: string, at: number): number => text.slice(0, at).split('\n').length;

test('every docs/references/<file>.md#<anchor> citation leads to a heading of that file', () => {
  const anchors = new Map<string, Set<string> | null>();
  const broken: string[] = [];
  let cited = 0;
  for (const { file, text } of files) {
    for (const m of text.matchAll(/docs\/references\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
      const [, doc = '', anchor] = m;
      cited++;
      if (!anchors.has(doc)) {
        const path = join(REFS, doc);
        anchors.set(doc, existsSync(path) ? anchorsOf(readFileSync(path, 'utf8')) : null);
      }
      const known = anchors.get(doc);
      const where = `${file}:${lineOf(text, m.index)}: docs/references/${doc}${anchor === undefined ? '' : `#${anchor}`}`;
      if (known === null || known === undefined) broken.push(`${where} (no such file)`);
      else if (anchor !== undefined && !known.has(anchor)) broken.push(`${where} (no such heading)`);
    }
  }
  assert.ok(cited > 0, 'the code cites docs/references/');
  assert.deepEqual(broken, []);
});

test('no comment cites the research notes a clone does not have', () => {
  // "issue NN §M" is the project's own issue tracker; any other § is a section of those notes.
  const notes = /\b(?:reference|loadrunner|aesthetics|tuning|formats-and-energy|vllm-knobs-and-model)(?:-anchors)?(?:\.md)?\s+§|(?<![\w/])reference\/[\w-]+\.md|(?<!\bissue \d+ )§/gi;
  const found = new Set<string>();
  for (const { file, text } of files) {
    for (const m of text.matchAll(notes)) found.add(`${file}:${lineOf(text, m.index)}: ${text.split('\n')[lineOf(text, m.index) - 1]?.trim() ?? ''}`);
  }
  assert.deepEqual([...found], []);
});

test('docs/references/README.md lists every reference document, and their links resolve', () => {
  const docs = readdirSync(REFS).filter((f) => f.endsWith('.md') && f !== 'README.md').sort();
  assert.ok(docs.length > 0);
  const readme = readFileSync(join(REFS, 'README.md'), 'utf8');
  for (const d of docs) assert.ok(readme.includes(`](${d})`), `README.md links ${d}`);
  for (const d of ['README.md', ...docs]) assert.deepEqual(brokenLinks(join(REFS, d), ROOT), [], d);
});
