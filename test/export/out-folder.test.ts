import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import type { ExportReport } from '../../src/export/types.js';
import { captureIo } from '../helpers/cli.js';
import { buildHistory, STUDY, type History } from './history.js';

// `export --out DIR` into a folder that already holds something: the folder is the export (summary.json
// lists its records, llm-d's analysis and `lm-bench ingest` read every file in it), so a folder holding
// files this export would not write, an earlier export of other runs among them, is refused and left
// as it was, unless --force, which writes beside them and deletes nothing. Real temp folders, the real
// CLI in process, a real SQLite history.

let h: History;

async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo(h.dir, { HF_HUB_OFFLINE: '1', LMB_DB: join(h.dir, 'unused.db') });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** Every file under a folder, by its path inside it, with its bytes' hash: what a reader of the folder sees. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p, `${prefix}${name}/`);
      else out[`${prefix}${name}`] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir, '');
  return out;
}

before(async () => {
  h = await buildHistory();
});
after(() => h.cleanup());

describe('export --out into a folder that holds something', () => {
  it('an earlier export of other runs: refused, naming them, the folder as it was; --force writes beside them and deletes nothing', async () => {
    const first = await cli(['export', '--runs', 'all', '--format', 'vllm', '--out', 'mixed', '--db', h.db, '--json']);
    assert.equal(first.code, 0, first.err);
    const earlier = JSON.parse(first.out) as ExportReport;
    assert.ok(earlier.files.length > 0);
    assert.deepEqual(earlier.others, []);
    const before = snapshot(join(h.dir, 'mixed'));

    const second = await cli(['export', '--study', STUDY, '--format', 'vllm', '--out', 'mixed', '--db', h.db]);
    assert.equal(second.code, 2, second.out);
    assert.match(second.err, /LMB_ERR_INVALID_ARGUMENT: --out .*mixed holds \d+ entries this export would not write \(run-\d+\.json, /);
    assert.match(second.err, /--force to write beside them/);
    assert.deepEqual(snapshot(join(h.dir, 'mixed')), before, 'nothing written, nothing removed, no staging folder');

    const forced = await cli(['export', '--study', STUDY, '--format', 'vllm', '--out', 'mixed', '--force', '--db', h.db, '--json']);
    assert.equal(forced.code, 0, forced.err);
    const report = JSON.parse(forced.out) as ExportReport;
    const mine = new Set([...report.files.flatMap((f) => [f.path, ...(f.sidecar === undefined ? [] : [f.sidecar])]), report.summary]);
    // What was there before and this export did not write: every one named, every one's bytes as they were.
    const left = Object.keys(before).map((n) => join(h.dir, 'mixed', n)).filter((p) => !mine.has(p)).sort();
    assert.ok(left.length > 0);
    assert.deepEqual(report.others, left);
    const after = snapshot(join(h.dir, 'mixed'));
    for (const p of left) {
      const name = p.slice(join(h.dir, 'mixed').length + 1);
      assert.equal(after[name], before[name], `${name} left as it was`);
    }
    const text = await cli(['export', '--study', STUDY, '--format', 'vllm', '--out', 'mixed', '--force', '--db', h.db]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /left beside them \(--force\): mixed\/run-\d+\.json, /);
  });

  it('a file a person put there is never replaced or deleted: refused, then written beside with --force', async () => {
    const out = join(h.dir, 'notes-here');
    mkdirSync(join(out, 'sub'), { recursive: true });
    writeFileSync(join(out, 'notes.txt'), 'mine\n');
    writeFileSync(join(out, 'sub', 'summary.json'), '[]\n');
    const refused = await cli(['export', '--study', STUDY, '--format', 'llm-d-br', '--out', out, '--db', h.db]);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /holds 2 entries this export would not write \(notes\.txt, sub\)/);
    assert.deepEqual(readdirSync(out).sort(), ['notes.txt', 'sub']);
    const forced = await cli(['export', '--study', STUDY, '--format', 'llm-d-br', '--out', out, '--force', '--db', h.db, '--json']);
    assert.equal(forced.code, 0, forced.err);
    assert.deepEqual((JSON.parse(forced.out) as ExportReport).others, [join(out, 'notes.txt'), join(out, 'sub')]);
    assert.equal(readFileSync(join(out, 'notes.txt'), 'utf8'), 'mine\n');
    assert.equal(readFileSync(join(out, 'sub', 'summary.json'), 'utf8'), '[]\n');
  });

  it('the same export again, or into an empty folder: written without --force, the folder holding exactly the export', async () => {
    const out = join(h.dir, 'again');
    mkdirSync(out);
    for (let i = 0; i < 2; i++) {
      const r = await cli(['export', '--study', STUDY, '--format', 'vllm', '--out', out, '--db', h.db, '--json']);
      assert.equal(r.code, 0, `export ${i + 1}: ${r.err}`);
      const report = JSON.parse(r.out) as ExportReport;
      assert.deepEqual(report.others, []);
      const written = [...report.files.flatMap((f) => [f.path, f.sidecar ?? '']), report.summary ?? ''].filter((p) => p !== '').map((p) => p.slice(out.length + 1));
      assert.deepEqual(readdirSync(out).sort(), written.sort());
    }
    assert.equal(existsSync(join(out, 'summary.json')), true);
  });
});
