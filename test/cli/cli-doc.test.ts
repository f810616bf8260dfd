import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../src/cli/registry.js';
import { CLI_DOC_BANNER, CLI_DOC_PARTS, CLI_DOC_PATH, commandAnchor, loadCommandDocs, readCliNotes, renderCliDoc, type CommandDoc } from '../../scripts/gen-cli-doc.js';
import { anchorsOf, brokenLinks } from '../helpers/markdown.js';

// docs/cli.md is generated from each command's usage text and docs/cli-notes/*.md, as docs/errors.md is
// from the error catalog: this fails when a usage text or a note changed and the page was not regenerated.

const REGENERATE = 'run: node --import tsx scripts/gen-cli-doc.ts';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The first line where two texts differ, so a stale page names what changed rather than dumping 50 KB. */
function firstDifference(committed: string, rendered: string): string {
  const a = committed.split('\n');
  const b = rendered.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}:\n  committed: ${JSON.stringify(a[i] ?? '(end)')}\n  generated: ${JSON.stringify(b[i] ?? '(end)')}`;
  }
  return 'no difference';
}

test('docs/cli.md is generated from the usage texts and notes, and current', async () => {
  const committed = readFileSync(CLI_DOC_PATH, 'utf8');
  const commands = await loadCommandDocs();
  const rendered = renderCliDoc(commands, readCliNotes());
  assert.ok(committed === rendered, `docs/cli.md is stale (${REGENERATE}); first difference at ${firstDifference(committed, rendered)}`);
  assert.ok(committed.startsWith(`${CLI_DOC_BANNER}\n`), 'the generated-file banner comes first');
  // Every command of the registry, with every line of its usage text, under its own heading.
  const anchors = anchorsOf(committed);
  assert.deepEqual(commands.map((c) => c.name), Object.keys(COMMANDS));
  for (const c of commands) {
    assert.ok(anchors.has(commandAnchor(c)), `${c.name} has a section (#${commandAnchor(c)})`);
    assert.ok(c.usage.trim().length > 0, `${c.name} has a usage text`);
    assert.ok(committed.includes(c.usage), `${c.name}'s usage text is on the page whole`);
  }
  assert.equal(commands.find((c) => c.name === 'model')?.deprecated ?? true, true, 'the `model` alias is marked deprecated');
});

test('every note belongs to a command or a part of the page, and every command but an alias has one', async () => {
  const names = new Set(Object.keys(COMMANDS));
  const parts: ReadonlySet<string> = new Set(CLI_DOC_PARTS);
  const notes = readCliNotes();
  const orphans = [...notes.keys()].filter((n) => !names.has(n) && !parts.has(n));
  assert.deepEqual(orphans, [], 'docs/cli-notes/<name>.md for a command the registry lacks: rename or delete it');
  const missing = (await loadCommandDocs()).filter((c) => !c.deprecated && !notes.has(c.name)).map((c) => c.name);
  assert.deepEqual(missing, [], 'write docs/cli-notes/<command>.md: what the command does beyond its flags');
  for (const part of CLI_DOC_PARTS) assert.ok(notes.has(part), `docs/cli-notes/${part}.md`);
});

test('the links of docs/cli.md lead somewhere', () => {
  assert.deepEqual(brokenLinks(fileURLToPath(CLI_DOC_PATH), ROOT), []);
});

test('the page is built from its inputs: usage whole in a fence it cannot close, aliases last and marked', () => {
  const cmds: CommandDoc[] = [
    { name: 'old', summary: 'deprecated: the old name of `new`', usage: 'Usage: lm-bench old', deprecated: true },
    { name: 'new', summary: 'does a | thing', usage: 'Usage: lm-bench new [--x]\n\n```\nnot a fence\n```', deprecated: false },
  ];
  const page = renderCliDoc(cmds, new Map([['new', 'What `new` does.'], ['_intro', 'Intro.'], ['_inputs', 'Inputs.']]));
  assert.ok(page.startsWith(`${CLI_DOC_BANNER}\n# CLI reference\n`));
  assert.ok(page.indexOf('## `new`') < page.indexOf('## `old` (deprecated)'), 'a deprecated alias comes after the commands');
  assert.match(page, /\| \[`new`\]\(#new\) \| does a \\\| thing \|/);
  assert.match(page, /\| \[`old`\]\(#old-deprecated\) \|/);
  assert.ok(page.includes('````text\nUsage: lm-bench new [--x]\n\n```\nnot a fence\n```\n````\n\nWhat `new` does.\n'), 'the fence is longer than any backtick run in the usage');
  assert.ok(page.indexOf('Intro.') < page.indexOf('## Inputs: models, GPUs, workloads\n\nInputs.'));
  assert.equal(page.endsWith('\n'), true);
});
