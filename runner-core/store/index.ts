export * from './types.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './sqlite.js';
