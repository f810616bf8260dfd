import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
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
});
