import type { Migration } from './dialect.js';

/**
 * 10: Upstash-protocol waits (`context.waitForEvent`) and the events kept for them (`notify` with a
 * run id, before its wait). Their own tables: a wait here never touches `runs.next_at` or
 * `steps.event_id`, which belong to the native scheduler. `deadline` is the timeout, in epoch ms;
 * `fire_until` is the lease of the runner delivering that timeout.
 */
export const qstashWaits: Migration = (d) => `
  CREATE TABLE qstash_waits (
    run_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    step_id INTEGER NOT NULL,
    waiter TEXT NOT NULL,
    created_at ${d.ms} NOT NULL,
    deadline ${d.ms} NOT NULL,
    fire_until ${d.ms},
    PRIMARY KEY (run_id, event_id, step_id)
  );
  CREATE INDEX qstash_waits_event ON qstash_waits (event_id);
  CREATE INDEX qstash_waits_deadline ON qstash_waits (deadline);

  CREATE TABLE qstash_kept_events (
    seq ${d.serial},
    run_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at ${d.ms} NOT NULL,
    keep_until ${d.ms} NOT NULL
  );
  CREATE INDEX qstash_kept_events_key ON qstash_kept_events (run_id, event_id, seq);
  CREATE INDEX qstash_kept_events_until ON qstash_kept_events (keep_until);
`;
