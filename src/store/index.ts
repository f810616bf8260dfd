export * from './store.js';
export { SqliteStore, openStore, defaultDbPath, migrate, BUSY_TIMEOUT_MS, type OpenStoreOptions } from './sqlite-store.js';
export { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
export { encodeJson, decodeJson } from './codec.js';
