export * from './store.js';
export { SqliteStore, openStore, defaultDbPath, type OpenStoreOptions } from './sqlite-store.js';
export { migrate, BUSY_TIMEOUT_MS } from './sqlite-file.js';
export { MIGRATIONS, SCHEMA_VERSION } from './migrations.js';
export { encodeJson, decodeJson } from './codec.js';
