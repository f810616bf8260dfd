import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { defaultCatalog, findRegisteredModel } from '../../src/catalog/index.js';
import { isLmBenchError } from '../../src/errors.js';
import { SCHEMA_VERSION, defaultDbPath, openStore } from '../../src/store/index.js';
import { storeContract } from './store.contract.js';
import { sampleRun, sampleSpec } from './samples.js';

function tempDir(): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-store-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

storeContract('SqliteStore', (options) => {
  const t = tempDir();
  const store = openStore(join(t.dir, 'db', 'lm-bench.db'), options);
  return {
    store,
    dispose: () => {
      store.close();
      t.dispose();
    },
  };
});

// Tests and benches open the store on ':memory:' (no WAL there, no file): the contract must hold for it too.
storeContract('SqliteStore on :memory:', (options) => {
  const store = openStore(':memory:', options);
  return { store, dispose: () => store.close() };
});

describe('SqliteStore specifics', () => {
  it('opening a file registers every model spec it stored, so the catalog finds them by id as they were stored', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'specs.db');
      const spec = { ...defaultCatalog().model('qwen3-8b'), id: 'stored-org/only-in-this-file', hf_name: 'Stored-Org/Only-In-This-File', layers: 7, source: 'test' };
      const s1 = openStore(path);
      s1.adoptModelSpec({ spec, config_hash: 'c'.repeat(64), origin: 'path', location: '/m/config.json' });
      s1.close();
      assert.equal(findRegisteredModel(spec.id), null, 'adopting alone registers nothing in this process');
      const s2 = openStore(path, { readonly: true });
      s2.close();
      assert.equal(defaultCatalog().model(spec.id).layers, 7);
    } finally {
      t.dispose();
    }
  });

  it('migrates an empty file to the current schema, in WAL mode with foreign keys on', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'nested', 'a.db');
      openStore(path).close();
      assert.ok(existsSync(path));
      const db = new Database(path);
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
      assert.deepEqual(tables, ['events', 'model_specs', 'models', 'runs', 'studies', 'trial_values', 'trials']);
      db.close();
      const store = openStore(path);
      // Foreign keys are per connection: a trial row pointing at no study must be refused.
      assert.throws(
        () => store.createTrial(12345, { config: {}, origin: 'default' }),
        (e: unknown) => isLmBenchError(e, 'LMB_ERR_STUDY_NOT_FOUND'),
      );
      store.close();
      const raw = new Database(path);
      raw.pragma('foreign_keys = ON');
      assert.throws(() =>
        raw
          .prepare(`INSERT INTO trials (study_id, number, state, origin, config, attrs, created_at_ms) VALUES (999, 0, 'waiting', 'default', '{}', '{}', 0)`)
          .run(),
      );
      raw.close();
    } finally {
      t.dispose();
    }
  });

  it('reopens an existing file and keeps its data', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'a.db');
      const s1 = openStore(path, { now: () => 5 });
      const study = s1.createStudy(sampleSpec());
      s1.storeRuns([sampleRun('x')]);
      s1.close();
      const s2 = openStore(path, { now: () => 6 });
      assert.deepEqual(s2.getStudy(study.id), study);
      assert.equal(s2.countRuns(), 1);
      s2.close();
    } finally {
      t.dispose();
    }
  });

  it('shares one file between two connections: commits are visible and a waiting trial is claimed once', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'shared.db');
      const a = openStore(path, { now: () => 1 });
      const b = openStore(path, { now: () => 2 });
      const study = a.createStudy(sampleSpec());
      a.createTrial(study.id, { config: { max_num_seqs: 8 }, origin: 'default' });
      a.createTrial(study.id, { config: { max_num_seqs: 16 }, origin: 'default' });
      assert.equal(b.getStudy(study.spec.name).id, study.id);
      const first = b.claimWaitingTrial(study.id);
      const second = a.claimWaitingTrial(study.id);
      assert.deepEqual([first?.number, second?.number], [0, 1]);
      assert.equal(first?.started_at_ms, 2);
      assert.equal(b.claimWaitingTrial(study.id), null);
      assert.equal(a.getTrial(first?.id ?? 0).state, 'running');
      a.close();
      b.close();
    } finally {
      t.dispose();
    }
  });

  it('refuses a database written by a newer schema', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'new.db');
      const db = new Database(path);
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      db.close();
      assert.throws(
        () => openStore(path),
        (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_SCHEMA_NEWER') && e.details['version'] === SCHEMA_VERSION + 1,
      );
    } finally {
      t.dispose();
    }
  });

  it('rolls a rejected batch back completely', () => {
    const t = tempDir();
    try {
      const store = openStore(join(t.dir, 'a.db'), { now: () => 1 });
      store.storeRuns([sampleRun('before')]);
      // gpu_count 0 violates a CHECK constraint in the middle of the batch.
      assert.throws(
        () => store.storeRuns([sampleRun('r1'), sampleRun('r2', { hardware: { gpu: 'H100-SXM', count: 0 } }), sampleRun('r3')]),
        (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED') && e.cause !== undefined,
      );
      assert.deepEqual(store.listRuns().map((r) => r.content_hash), ['before']);
      // The store stays usable after the rollback.
      assert.equal(store.storeRuns([sampleRun('r1')])[0]?.status, 'new');
      store.close();
    } finally {
      t.dispose();
    }
  });

  it('refuses a non-SQLite file with LMB_ERR_STORE_FAILED', async () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'garbage.db');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path, 'this is not a database, just text long enough to fill a header page '.repeat(20));
      assert.throws(() => openStore(path), (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED'));
    } finally {
      t.dispose();
    }
  });

  it('resolves the default path from LMB_DB or the working directory', () => {
    assert.equal(defaultDbPath({ cwd: '/w', env: {} }), join('/w', '.lm-bench', 'lm-bench.db'));
    assert.equal(defaultDbPath({ cwd: '/w', env: { LMB_DB: '/x/y.db' } }), '/x/y.db');
  });
});
