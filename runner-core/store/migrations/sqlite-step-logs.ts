/**
 * SQLite migration: step logs (what a step's function printed), one row per execution that printed
 * something. `attempt` is the drive request's `seq`; a retried step keeps each failed attempt's
 * lines. ON CONFLICT DO NOTHING on the key: a commit repeated after a crash changes nothing.
 */
export const SQLITE_MIGRATION_STEP_LOGS = `
  CREATE TABLE step_logs (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    at INTEGER NOT NULL,
    lines TEXT NOT NULL,
    dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx, attempt)
  );
`;
