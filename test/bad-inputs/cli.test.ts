/**
 * The bad-input corpus, command-line part: every row of cli-cases.ts run in-process against a seeded
 * SQLite file. Each case must exit non-zero with a catalog code and a message naming what is wrong,
 * print no stack trace and leave every table's row count as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLI_CASES } from './cli-cases.js';
import { judgeCli, runCliCase } from './cli-harness.js';
import { flushVerdicts, formatVerdict, makeSandbox, record, type Sandbox } from './harness.js';
import { generatedInputs } from './generate.js';

let sb: Sandbox;
before(() => {
  sb = makeSandbox('cli');
  generatedInputs(sb.dir);
});
after(() => {
  flushVerdicts('cli');
  sb.cleanup();
});

describe('bad inputs: command line', () => {
  const ids = new Set<string>();
  for (const c of CLI_CASES) {
    assert.ok(!ids.has(c.id), `duplicate case id ${c.id}`);
    ids.add(c.id);
    it(c.id, async () => {
      const v = judgeCli(c, await runCliCase(c, sb));
      record(v);
      assert.equal(v.category, 'clear', formatVerdict(v));
    });
  }
});
