import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LmBenchError } from '../errors.js';
import { defaultDbPath, openStore, type Store } from '../store/index.js';
import type { CliIo } from './io.js';

/**
 * The history a read-only command (export, report) reads: `--db` resolved against the command's working
 * directory, or the default. One that does not exist is an error naming it, before anything is opened:
 * opening it would create an empty database file and then report that no study or run is in it.
 */
export function openExistingHistory(io: CliIo, db: string | undefined): { readonly store: Store; readonly dbPath: string } {
  const dbPath = db === undefined ? defaultDbPath(io) : resolve(io.cwd, db);
  if (!existsSync(dbPath)) throw new LmBenchError('LMB_ERR_FILE_NOT_FOUND', `no history database at ${dbPath} (give --db PATH or set LMB_DB)`, { details: { field: 'db', value: dbPath } });
  // Read-only: these commands never write the history. openStore registers its stored models and GPUs.
  return { store: openStore(dbPath, { readonly: true }), dbPath };
}
