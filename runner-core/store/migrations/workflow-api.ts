import type { Migration } from './dialect.js';

/** 2: the whole workflow API: parallel groups, sleeps, event waits, HTTP calls, kept events. */
export const workflowApi: Migration = (d) => `
  ALTER TABLE steps ADD COLUMN group_id INTEGER;
  ALTER TABLE steps ADD COLUMN until ${d.ms};
  ALTER TABLE steps ADD COLUMN event_id TEXT;
  ALTER TABLE steps ADD COLUMN request TEXT;
  -- notify finds the waiting steps of an event id without a scan.
  CREATE INDEX steps_waiting ON steps (event_id) WHERE event_id IS NOT NULL AND status = 'running';

  -- Events notified while nobody waited, kept for a wait registered shortly after.
  CREATE TABLE events (
    seq ${d.serial},
    event_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at ${d.ms} NOT NULL,
    keep_until ${d.ms} NOT NULL
  );
  CREATE INDEX events_by_id ON events (event_id, seq);
`;
