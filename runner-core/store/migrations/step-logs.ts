import type { Migration } from './dialect.js';

/**
 * 6: step logs (what a step's function printed), one row per execution that printed something.
 * `attempt` is the drive request's `seq`; a retried step keeps each failed attempt's lines. ON
 * CONFLICT DO NOTHING on the key: a commit repeated after a crash changes nothing. PostgreSQL's
 * table shipped without the foreign key (its share lock on `runs` only added work to the hot path);
 * retention deletes a run's step logs itself on both stores.
 */
export const stepLogs: Migration = (d) => `
  CREATE TABLE step_logs (
    run_id TEXT NOT NULL${d.name === 'sqlite' ? ' REFERENCES runs (id) ON DELETE CASCADE' : ''},
    idx INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    at ${d.ms} NOT NULL,
    lines TEXT NOT NULL,
    dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx, attempt)
  );
`;
