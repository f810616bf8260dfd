import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { PROJECT_ROOT } from '../../src/catalog/index.js';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { captureIo } from '../helpers/cli.js';
import { openStore } from '../../src/store/index.js';
import { fixture, NIGHTLY_DIR } from './helpers.js';

function capture(cwd: string, env: Record<string, string> = {}): { io: CliIo; out: () => string; err: () => string } {
  const io = captureIo(cwd, env);
  return { io, out: io.out, err: io.err };
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmb-ingest-cli-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('lm-bench ingest', () => {
  it('ingests into the default database under the cwd and prints a summary; exit 0', async () => {
    const c = capture(dir);
    assert.equal(await main(['ingest', NIGHTLY_DIR], c.io), 0);
    assert.match(c.out(), /30 run\(s\) accepted, 0 skipped/);
    const store = openStore(join(dir, '.lm-bench', 'lm-bench.db'));
    assert.equal(store.countRuns(), 30);
    store.close();
  });

  it('prints one JSON document with --json and exits 1 when a file is rejected', async () => {
    const c = capture(dir);
    const db = join(dir, 'j.db');
    const code = await main(['ingest', fixture('vllm-serve-2025.json'), fixture('broken/truncated.json'), '--set', 'max_num_seqs=128', '--gpu', 'H100-SXM', '--db', db, '--json'], c.io);
    assert.equal(code, 1);
    const doc = JSON.parse(c.out()) as { accepted: number; rejected: { code: string; path: string }[]; db: string };
    assert.equal(doc.accepted, 1);
    assert.equal(doc.db, db);
    assert.deepEqual(doc.rejected.map((r) => r.code), ['LMB_ERR_INGEST_REJECTED']);
    const store = openStore(db);
    assert.deepEqual(store.listRuns()[0]?.server_config, { max_num_seqs: 128 });
    store.close();
  });

  it('reads --server-config and LMB_DB', async () => {
    const cfg = join(dir, 'cfg.yaml');
    writeFileSync(cfg, 'gpu: A100-80GB\nmodel: llama-3.1-8b\nserver_config:\n  block_size: 32\n');
    const db = join(dir, 'env.db');
    const c = capture(dir, { LMB_DB: db });
    assert.equal(await main(['ingest', fixture('profile_export_genai_perf.json'), '--server-config', cfg, '--set', 'enforce_eager=true'], c.io), 0);
    const store = openStore(db);
    const run = store.listRuns()[0];
    assert.deepEqual(run?.server_config, { block_size: 32, enforce_eager: true });
    assert.deepEqual(run?.hardware, { gpu: 'A100-80GB', count: 1 });
    store.close();
  });

  it('refuses bad flags with exit 2 before touching anything', async () => {
    for (const argv of [
      ['ingest'],
      ['ingest', NIGHTLY_DIR, '--set', 'max_num_seqz=1'],
      ['ingest', NIGHTLY_DIR, '--gpu', 'TPU-v9'],
      ['ingest', NIGHTLY_DIR, '--gpus', '0'],
      ['ingest', NIGHTLY_DIR, '--server-config', join(dir, 'missing.yaml')],
    ]) {
      const c = capture(dir);
      assert.equal(await main([...argv, '--db', join(dir, 'never.db')], c.io), 2, argv.join(' '));
      assert.match(c.err(), /lm-bench: error LMB_ERR_/);
    }
    assert.equal(existsSync(join(dir, 'never.db')), false);
  });

  it('bin/lm-bench.js ingest says what it stored: files[].stored in --json, the same as a table in the text', async () => {
    const db = join(dir, 'spawned.db');
    const csv = fixture('aiperf/v0.8.0-schema1.0/profile_export_aiperf.csv');
    const json = fixture('sglang/llama_3_3_70b_output_online.jsonl');
    const argv = ['ingest', csv, json, '--set', 'max_num_seqs=256', '--gpu', 'H100-SXM', '--gpus', '8', '--model', 'llama-3.1-70b', '--db', db];
    const run = (extra: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        const child = execFile(process.execPath, [join(PROJECT_ROOT, 'bin', 'lm-bench.js'), ...argv, ...extra], { cwd: dir, timeout: 60_000 }, (_err, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }));
      });
    const first = await run(['--json']);
    assert.equal(first.code, 0, first.stderr);
    const doc = JSON.parse(first.stdout) as { accepted: number; files: { format: string; run_ids: number[]; stored: Record<string, number | null>[] }[] };
    assert.equal(doc.accepted, 6);
    const [aiperf, sglang] = doc.files;
    assert.deepEqual(aiperf?.stored, [{ run_id: aiperf?.run_ids[0] ?? -1, completed: 481414, failed: 18586, duration_s: 141.58, mean_ttft_ms: 11205.91, output_throughput: 343421.9 }]);
    assert.equal(sglang?.stored.length, 5);
    assert.deepEqual(sglang?.stored[4], { run_id: sglang?.run_ids[4] ?? -1, completed: 3200, failed: null, duration_s: 387.5871320969891, mean_ttft_ms: null, output_throughput: 4238.110256944623 });
    // The text output of a second call: the same runs, now already stored, as a table.
    const second = await run([]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /0 run\(s\) accepted, 6 skipped as already stored/);
    assert.match(second.stdout, /run\s+completed\s+failed\s+duration_s\s+mean_ttft_ms\s+output_tok_s/);
    assert.match(second.stdout, new RegExp(`#${aiperf?.run_ids[0] ?? -1}\\s+481414\\s+18586\\s+141\\.58\\s+11205\\.9\\s+343421\\.9\\s+already stored`));
    assert.match(second.stdout, /3200\s+-\s+387\.59\s+-\s+4238\.1\s+already stored/, 'no failure count and no mean TTFT in a 2024 SGLang file: "-"');
  });
});

