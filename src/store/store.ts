/**
 * The history store's type and records. The store is `SqliteStore` (sqlite-store.ts: its contract, the
 * invariants it keeps, is documented there and tested in `test/store/store.contract.ts`); tests and
 * benches open it on ':memory:' or a temporary file. `Store` names it for the modules that only use
 * it, and is a type alias rather than an interface because there is one implementation; a type-only
 * export, so importing this module never loads better-sqlite3.
 */
export type { SqliteStore as Store } from './sqlite-store.js';
export * from './records.js';
