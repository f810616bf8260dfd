import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { isLmBenchError } from '../../src/errors.js';
import { MIGRATIONS, SCHEMA_VERSION, defaultDbPath, openStore } from '../../src/store/index.js';
import { sampleRun } from './samples.js';

/** Opening files a user may hand `--db`: older, newer and foreign databases, and two openers at once. */

function tempDir(): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'lmb-store-open-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A database at schema `version`, built as an lm-bench of that time left it, with one run in it. */
function olderHistory(path: string, version: number): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (let v = 0; v < version; v++) {
    db.exec(MIGRATIONS[v] ?? '');
    db.pragma(`user_version = ${v + 1}`);
  }
  db.prepare(
    `INSERT INTO runs (content_hash, source_format, source_path, model, gpu, gpu_count, server_config, workload, result, meta, created_at_ms)
     VALUES ('old-run', 'lm_bench', NULL, 'llama-3.1-8b', 'H100-SXM', 1, '{"max_num_seqs":{"$lmb_num":"Infinity"}}', NULL, '{}', '{"unavailable":[]}', 7)`,
  ).run();
  db.close();
}

/** Every folder from `dir` up to / lets other users through (o+x). */
function reachableByOthers(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (dirname(d) === d) return true;
  }
}

describe('opening a history file', () => {
  for (let version = 1; version < SCHEMA_VERSION; version++) {
    it(`migrates a schema ${version} history to ${SCHEMA_VERSION} and keeps its runs`, () => {
      const t = tempDir();
      try {
        const path = join(t.dir, `v${version}.db`);
        olderHistory(path, version);
        const store = openStore(path, { now: () => 9 });
        const [old] = store.listRuns();
        assert.equal(old?.content_hash, 'old-run');
        assert.equal(old?.server_config['max_num_seqs'], Infinity);
        assert.equal(old?.created_at_ms, 7);
        assert.deepEqual(store.storeRuns([sampleRun('old-run', { serverConfig: { max_num_seqs: Infinity } })]), [{ status: 'duplicate', id: old?.id }], 'the old dedupe key still holds');
        assert.equal(store.storeRuns([sampleRun('new-run')])[0]?.status, 'new');
        store.close();
        const raw = new Database(path, { readonly: true });
        assert.equal(raw.pragma('user_version', { simple: true }), SCHEMA_VERSION);
        raw.close();
      } finally {
        t.dispose();
      }
    });
  }

  it('a read-only open of an older history says how to upgrade it, and leaves it as it was', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'old.db');
      olderHistory(path, 1);
      const before = readFileSync(path);
      assert.throws(
        () => openStore(path, { readonly: true }),
        (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED') && /older lm-bench \(schema version 1, this one uses \d+\).*lm-bench ingest, tune or serve/.test(e.message),
      );
      assert.deepEqual(readFileSync(path), before);
    } finally {
      t.dispose();
    }
  });

  it('refuses a history a newer lm-bench wrote without touching a byte of it (no switch to WAL)', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'newer.db');
      const db = new Database(path);
      db.exec(`CREATE TABLE future (x); INSERT INTO future VALUES (1);`);
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      db.close();
      const before = readFileSync(path);
      assert.throws(() => openStore(path), (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_SCHEMA_NEWER'));
      assert.deepEqual(readFileSync(path), before);
      const raw = new Database(path, { readonly: true });
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'delete');
      raw.close();
    } finally {
      t.dispose();
    }
  });

  it("refuses another program's SQLite database instead of adding lm-bench's tables to it", () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'optuna.db');
      const db = new Database(path);
      db.exec(`CREATE TABLE version_info (v TEXT); CREATE TABLE alembic_version (n TEXT); INSERT INTO version_info VALUES ('12');`);
      db.close();
      const before = readFileSync(path);
      assert.throws(
        () => openStore(path),
        (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED') && /not an lm-bench history.*alembic_version, version_info/.test(e.message),
      );
      assert.deepEqual(readFileSync(path), before);
    } finally {
      t.dispose();
    }
  });

  it('two openers of one new file: the second finds the schema the first made while it waited for the lock', async () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'race.db');
      const empty = new Database(path);
      empty.pragma('journal_mode = WAL');
      empty.close();
      // The first opener, in a worker thread: it holds the write lock, tells this thread, then (a moment
      // later, while this thread has read version 0 and waits in BEGIN IMMEDIATE) applies every migration.
      const worker = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         const Database = require(workerData.driver);
         const db = new Database(workerData.path);
         db.exec('BEGIN IMMEDIATE');
         parentPort.postMessage('locked');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
         workerData.migrations.forEach((sql, v) => { db.exec(sql); db.pragma('user_version = ' + (v + 1)); });
         db.exec('COMMIT');
         db.close();`,
        { eval: true, workerData: { path, migrations: MIGRATIONS, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
      );
      const done = new Promise((resolve, reject) => {
        worker.once('exit', resolve);
        worker.once('error', reject);
      });
      await new Promise((resolve) => worker.once('message', resolve));
      const store = openStore(path, { now: () => 1 });
      assert.equal(store.storeRuns([sampleRun('after-race')])[0]?.status, 'new');
      store.close();
      await done;
    } finally {
      t.dispose();
    }
  });

  const ROOT = fileURLToPath(new URL('../..', import.meta.url));
  // As root (who ignores permissions) the reader runs as nobody, who must reach the checkout to load it.
  const otherUserUnavailable = process.getuid?.() === 0 && !reachableByOthers(ROOT);

  /** Another user (nobody when this is root, else this user) reads the history read-only, then tries to write it. */
  function asReader(path: string, home: string): { hashes: string[]; write: string } {
    const storeModule = fileURLToPath(new URL('../../src/store/index.ts', import.meta.url));
    const script = `const { openStore } = await import(${JSON.stringify(storeModule)});
      const s = openStore(${JSON.stringify(path)}, { readonly: true });
      const hashes = s.listRuns().map((r) => r.content_hash);
      s.close();
      let write = 'opened';
      try {
        const w = openStore(${JSON.stringify(path)});
        try { w.appendEvent({ studyId: null, kind: 'probe', payload: null }); } finally { w.close(); }
      } catch (e) { write = e.message; }
      console.log(JSON.stringify({ hashes, write }));`;
    const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      cwd: ROOT,
      env: { ...process.env, HOME: home },
      ...asOther,
    });
    assert.equal(child.status, 0, child.stderr);
    return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '') as { hashes: string[]; write: string };
  }

  /** A closed history with one run at folder/history.db, the temporary folder open to other users. */
  function sharedHistory(t: { dir: string }): string {
    const folder = join(t.dir, 'shared');
    mkdirSync(folder);
    const path = join(folder, 'history.db');
    const writer = openStore(path, { now: () => 3 });
    writer.storeRuns([sampleRun('shared-run')]);
    writer.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the last writer to close removes its -wal and -shm');
    chmodSync(t.dir, 0o755);
    return path;
  }

  it('a read-only command reads a history in a folder it cannot write (WAL needs a -shm file there)', { skip: otherUserUnavailable }, () => {
    const t = tempDir();
    try {
      const path = sharedHistory(t);
      const before = readFileSync(path);
      // The reader may write the file (as nobody, once it is nobody's), only not the folder.
      if (process.getuid?.() === 0) chownSync(path, 65534, 65534);
      chmodSync(dirname(path), 0o555);
      const out = asReader(path, t.dir);
      assert.deepEqual(out.hashes, ['shared-run']);
      // A writer there is refused, and told why in words SQLite leaves out.
      assert.match(out.write, /attempt to write a readonly database \(this user cannot write the database file, or the folder that holds it\)/);
      assert.deepEqual(readFileSync(path), before);
      assert.equal(existsSync(`${path}-shm`), false);
    } finally {
      chmodSync(join(t.dir, 'shared'), 0o755);
      t.dispose();
    }
  });

  it("a reader who cannot write the history leaves no -wal or -shm of its own in a shared folder (they would break the owner's writes)", { skip: otherUserUnavailable }, () => {
    const t = tempDir();
    try {
      const path = sharedHistory(t);
      chmodSync(dirname(path), 0o777);
      chmodSync(path, 0o444);
      const out = asReader(path, t.dir);
      assert.deepEqual(out.hashes, ['shared-run']);
      // A writer opens it read-only, as SQLite would, and its first write says why it failed.
      assert.match(out.write, /store appendEvent: attempt to write a readonly database \(this user cannot write the database file/);
      assert.deepEqual([existsSync(`${path}-wal`), existsSync(`${path}-shm`)], [false, false]);
    } finally {
      t.dispose();
    }
  });

  it('a folder given as the database is named as a folder, read-only or not', () => {
    const t = tempDir();
    try {
      for (const readonly of [false, true]) {
        assert.throws(
          () => openStore(t.dir, { readonly }),
          (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED') && e.message.includes('is a folder') && e.message.includes(join(t.dir, 'lm-bench.db')),
        );
      }
    } finally {
      t.dispose();
    }
  });

  it('a write that waited out the busy timeout says another process held the lock', () => {
    const t = tempDir();
    try {
      const path = join(t.dir, 'busy.db');
      const store = openStore(path, { now: () => 1 });
      const other = new Database(path);
      other.exec('BEGIN IMMEDIATE');
      try {
        assert.throws(
          () => store.storeRuns([sampleRun('waits')]),
          (e: unknown) => isLmBenchError(e, 'LMB_ERR_STORE_FAILED') && /database is locked \(another process held the history's write lock for over \d+ s/.test(e.message),
        );
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      assert.equal(store.storeRuns([sampleRun('waits')])[0]?.status, 'new', 'nothing half-written: the run goes in once the lock is free');
      store.close();
    } finally {
      t.dispose();
    }
  });

  it('a relative LMB_DB is read against the command\'s working directory, like --db', () => {
    assert.equal(defaultDbPath({ cwd: '/work/proj', env: { LMB_DB: 'hist/x.db' } }), '/work/proj/hist/x.db');
    assert.equal(defaultDbPath({ cwd: '/work/proj', env: { LMB_DB: '/abs/y.db' } }), '/abs/y.db');
  });
});
