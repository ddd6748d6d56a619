/**
 * What differs between SQLite's and PostgreSQL's spelling of the same table change: the column
 * types below. A migration is written once, as a function of the dialect, so both stores keep the
 * same tables and column names (rows.ts maps both).
 */
export interface Dialect {
  name: 'sqlite' | 'postgres';
  /** Epoch milliseconds and durations in whole ms (every value far below 2^53). */
  ms: 'INTEGER' | 'BIGINT';
  /**
   * A duration measured to fractions of a millisecond (a route's `performance.now()`). SQLite's
   * INTEGER affinity keeps such a value as the REAL it is.
   */
  fraction: 'INTEGER' | 'DOUBLE PRECISION';
  /** A rising row number as the primary key. */
  serial: 'INTEGER PRIMARY KEY AUTOINCREMENT' | 'BIGSERIAL PRIMARY KEY';
}

export const SQLITE: Dialect = {
  name: 'sqlite',
  ms: 'INTEGER',
  fraction: 'INTEGER',
  serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
};

export const POSTGRES: Dialect = {
  name: 'postgres',
  ms: 'BIGINT',
  fraction: 'DOUBLE PRECISION',
  serial: 'BIGSERIAL PRIMARY KEY',
};

/** One entry of the migration list (list.ts): its statements in a dialect's spelling. */
export type Migration = (d: Dialect) => string;
