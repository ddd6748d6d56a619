import type { Database } from 'better-sqlite3';
import { SQLITE } from './dialect.js';
import { TABLE_CHANGES } from './list.js';

/**
 * The SQLite store's migrations: the table changes of list.ts, one version each. `PRAGMA
 * user_version` holds how many have been applied, so entry `i` runs exactly once per database file.
 */
export const MIGRATIONS: readonly string[] = TABLE_CHANGES.map((migration) => migration(SQLITE));

function userVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the schema up to date, one transaction per migration.
 * Each transaction re-reads `user_version` under the write lock, so two processes opening the
 * same new file at once do not both run a migration.
 *
 * @example
 * migrate(new Database('.wf/dev.db'));
 */
export function migrate(db: Database): void {
  const current = userVersion(db);
  if (current > MIGRATIONS.length) {
    throw new Error(
      `Expected the database schema version to be at most ${MIGRATIONS.length}, got ${current}: it was written by a newer wfkit.`,
    );
  }
  const step = db.transaction((index: number) => {
    if (userVersion(db) !== index) return;
    db.exec(MIGRATIONS[index] ?? '');
    // PRAGMA does not take bound parameters; `index` is a loop counter, never user input.
    db.pragma(`user_version = ${index + 1}`);
  });
  for (let index = current; index < MIGRATIONS.length; index++) step.immediate(index);
}
