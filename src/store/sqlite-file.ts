import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { LmBenchError } from '../errors.js';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';

/**
 * The SQLite file under a history: opening it (a folder, another user's file, a reader that cannot
 * create the `-shm` index), refusing what lm-bench must not touch (a newer schema, another program's
 * database), migrating it, and SQLite's errors in lm-bench's words. The store itself is sqlite-store.ts.
 */

/** Milliseconds a connection waits for another writer's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

type Db = Database.Database;

export function openDb(path: string, readonly: boolean): Db {
  // SQLite calls a folder "unable to open database file" (or, read-only, "disk I/O error").
  if (path !== ':memory:' && statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) {
    throw new LmBenchError('LMB_ERR_STORE_FAILED', `store open ${path}: it is a folder, not a database file (a history in it would be ${join(path, 'lm-bench.db')})`, {
      details: { file: path },
    });
  }
  try {
    if (path !== ':memory:' && !readonly) mkdirSync(dirname(path), { recursive: true });
    return new Database(path, { readonly, fileMustExist: readonly });
  } catch (err) {
    throw storeError(err, `open ${path}`);
  }
}

/**
 * A history file this user may read but not write. Opened with no writer at work on it (no `-wal`),
 * SQLite would create `-wal` and `-shm` beside it owned by this user and leave them at close (a
 * read-only connection never removes them); the owner's next write then finds an index it cannot
 * write and fails, "attempt to write a readonly database", until someone deletes them. Such a file is
 * read from a copy in memory instead, which creates nothing.
 */
export function othersHistory(path: string): boolean {
  if (path === ':memory:' || statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false;
  try {
    accessSync(path, constants.W_OK);
    return false;
  } catch {
    return true;
  }
}

/**
 * A reader of a WAL database needs its `-shm` index, and SQLite creates that file beside the database
 * when no writer has it open. In a folder the reader cannot write (a shared or mounted history, another
 * user's) that fails with these codes, and every read-only command would refuse a history it can read.
 */
const SHM_CODES: ReadonlySet<string> = new Set(['SQLITE_READONLY_DIRECTORY', 'SQLITE_READONLY_CANTINIT']);

export function needsSharedMemory(err: unknown): boolean {
  const cause = err instanceof LmBenchError ? err.cause : err;
  const code = cause !== null && typeof cause === 'object' && 'code' in cause ? String(cause.code) : '';
  return SHM_CODES.has(code);
}

/**
 * The database read into memory, for a reader that cannot create `-shm` (see SHM_CODES). Only without a
 * `-wal` file: then no writer has the file open and every commit is in the main file, so the copy is
 * the whole history. Its header is marked rollback-journal (bytes 18–19, 2 → 1: SQLite opens no WAL
 * database from memory); the file itself is only read.
 */
export function readonlyCopy(path: string): Db {
  const wal = `${path}-wal`;
  const refuse = (): LmBenchError =>
    new LmBenchError(
      'LMB_ERR_STORE_FAILED',
      `store open ${path}: another process is writing it (${wal} exists) and this user cannot open or create its -shm index; read it when that writer has stopped`,
      { details: { file: path } },
    );
  if (existsSync(wal)) throw refuse();
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw storeError(err, `open ${path}`);
  }
  // A writer that started while the file was read may have checkpointed into it mid-read.
  if (existsSync(wal)) throw refuse();
  if (bytes.length >= 20 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  try {
    return new Database(bytes, { readonly: true });
  } catch (err) {
    throw storeError(err, `open ${path}`);
  }
}

export function configure(db: Db): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('foreign_keys = ON');
}

export function useWal(db: Db): void {
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the last commits.
  db.pragma('synchronous = NORMAL');
}

const userVersion = (db: Db): number => db.pragma('user_version', { simple: true }) as number;

/**
 * Refuses, before anything is written, a file this lm-bench must not touch: one a newer lm-bench wrote,
 * or a SQLite database of something else (user_version 0 with tables in it: `--db` given the wrong file;
 * migrating would add lm-bench's tables beside its own). A read-only open of an older history fails
 * here too, saying how to upgrade it, since reading it would need the migrations it lacks.
 */
export function assertOpenable(db: Db, name: string): void {
  // One read transaction: the version and the tables from one snapshot, not a version 0 read before
  // another opener's migration committed and that migration's tables read after it.
  db.transaction(() => {
    const version = userVersion(db);
    refuseNewer(name, version);
    if (version === 0) refuseForeign(db, name);
    if (version < SCHEMA_VERSION && db.readonly) {
      const why =
        version === 0
          ? 'holds no lm-bench history (an empty database)'
          : `was written by an older lm-bench (schema version ${version}, this one uses ${SCHEMA_VERSION}) and must be upgraded by a command that writes the history (lm-bench ingest, tune or serve) before it can be read`;
      throw new LmBenchError('LMB_ERR_STORE_FAILED', `${name} ${why}`, { details: { file: name, version, known: SCHEMA_VERSION } });
    }
  }).deferred();
}

function refuseNewer(name: string, version: number): void {
  if (version <= SCHEMA_VERSION) return;
  throw new LmBenchError(
    'LMB_ERR_STORE_SCHEMA_NEWER',
    `${name} has schema version ${version}, newer than this lm-bench knows (${SCHEMA_VERSION}); upgrade lm-bench`,
    { details: { file: name, version, known: SCHEMA_VERSION } },
  );
}

function refuseForeign(db: Db, name: string): void {
  const names = (db.prepare(`SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  if (names.length === 0) return;
  const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')}, …` : names.join(', ');
  throw new LmBenchError(
    'LMB_ERR_STORE_FAILED',
    `${name} is a SQLite database but not an lm-bench history (its schema holds ${shown} but no lm-bench schema version); give --db a new file or an lm-bench history`,
    { details: { file: name, tables: names } },
  );
}

/**
 * Applies the migrations the file lacks, each with its user_version bump in one transaction. The version
 * is read again inside each write transaction: two processes opening one new file at once (two ingests,
 * the service and its study worker) both see version 0 before either takes the lock, and the second
 * must find the first one's schema rather than create it twice ("table runs already exists").
 */
export function migrate(db: Db, name: string = db.name): number {
  assertOpenable(db, name);
  const step = db.transaction((): boolean => {
    const v = userVersion(db);
    refuseNewer(name, v);
    if (v === SCHEMA_VERSION) return false;
    if (v === 0) refuseForeign(db, name);
    db.exec(MIGRATIONS[v] ?? '');
    db.pragma(`user_version = ${v + 1}`);
    return true;
  });
  while (userVersion(db) < SCHEMA_VERSION && step.immediate()) {
    // one migration per transaction
  }
  return SCHEMA_VERSION;
}

/**
 * What SQLite's words leave out, by its error family (SQLITE_BUSY_SNAPSHOT is SQLITE_BUSY): "database is
 * locked" after a wait says nothing of the wait or of whom, "attempt to write a readonly database"
 * nothing of the permissions.
 */
const HINTS: Readonly<Record<string, string>> = {
  SQLITE_BUSY: `another process held the history's write lock for over ${BUSY_TIMEOUT_MS / 1000} s; try again when it has finished`,
  SQLITE_READONLY: 'this user cannot write the database file, or the folder that holds it',
};

export function storeError(err: unknown, op: string): LmBenchError {
  if (err instanceof LmBenchError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = err !== null && typeof err === 'object' && 'code' in err ? String(err.code) : '';
  const hint = HINTS[code.split('_').slice(0, 2).join('_')];
  return new LmBenchError('LMB_ERR_STORE_FAILED', `store ${op}: ${message}${hint === undefined ? '' : ` (${hint})`}`, { cause: err });
}
