import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../src/cli/registry.js';
import { headingAnchor } from '../scripts/gen-cli-doc.js';
import { brokenLinks } from './helpers/markdown.js';

// The README is a front page: a pitch, install, the quick start, one-line tables that link into docs/,
// and a changelog. What it promises a newcomer is checked here; the reference lives in docs/.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = join(ROOT, 'README.md');
const text = readFileSync(README, 'utf8');

/** The body of the `## title` section (up to the next `## `). */
function section(title: string): string {
  const start = text.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has a "## ${title}" section`);
  const rest = text.slice(start + title.length + 5);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

test('the quick start is the two commands a fresh clone needs', () => {
  const block = /```sh\n([\s\S]*?)```/.exec(section('Quick start'))?.[1] ?? '';
  const commands = block.split('\n').filter((l) => l.trim() !== '').map((l) => l.replace(/\s+#.*$/, '').trim());
  assert.deepEqual(commands, ['npm install && npm start', 'npm test']);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.match(pkg.scripts['start'] ?? '', /\bdemo\b/, '`npm start` is the demo the quick start describes');
});

test('every command has one line in the README, linking to its section of docs/cli.md', () => {
  const table = section('Commands');
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (/^deprecated\b/i.test(entry.summary)) continue;
    const row = new RegExp(`^\\| \\[\`${name}\`\\]\\(docs/cli\\.md#${headingAnchor(`\`${name}\``)}\\) \\| .+ \\|$`, 'm');
    assert.match(table, row, `a row for \`${name}\``);
  }
  for (const line of table.split('\n').filter((l) => l.startsWith('| ['))) assert.ok(line.length <= 200, `a one-line row: ${line.slice(0, 60)}…`);
});

test("every route of docs/api.md (the service's own: test/http/api-doc.test.ts) has its line in the README", () => {
  const api = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const contents = api.slice(api.indexOf('\n## Contents\n')).split(/\n## /)[1] ?? '';
  const routes = contents
    .split('\n')
    .filter((l) => l.startsWith('| [') && !/deprecated/i.test(l))
    .flatMap((l) => [...(l.split(' | ')[0] ?? '').matchAll(/`((?:GET|POST|DELETE) \/[^`]*)`/g)].map((m) => m[1] ?? ''));
  assert.ok(routes.length >= 10, 'routes read from docs/api.md');
  const table = section('HTTP API');
  for (const route of routes) assert.ok(table.includes(`\`${route}\``), `the README's route table has \`${route}\``);
});

test('every row of the README is one line, and the changelog is kept', () => {
  const longest = Math.max(...text.split('\n').filter((l) => l.startsWith('|')).map((l) => l.length));
  assert.ok(longest <= 200, `the longest table row is ${longest} characters; move the detail into docs/`);
  assert.match(section('Changes'), /^- /m);
});

test('the links of the README and of the pages it replaced lead somewhere', () => {
  for (const file of ['README.md', 'docs/api.md', 'docs/targets.md']) assert.deepEqual(brokenLinks(join(ROOT, file), ROOT), [], file);
});
