import type { Migration } from './dialect.js';

/** 4: schedules, cron ticks that start runs (runner-core/schedules/). Headers are stored redacted. */
export const schedules: Migration = (d) => `
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    next_at ${d.ms} NOT NULL,
    last_fired_at ${d.ms},
    created_at ${d.ms} NOT NULL
  );
  CREATE INDEX schedules_due ON schedules (next_at);
`;
