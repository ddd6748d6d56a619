/** Schedules: cron ticks that start runs (runner-core/schedules/). Headers are stored redacted. */
export const PG_MIGRATION_SCHEDULES = `
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    next_at BIGINT NOT NULL,
    last_fired_at BIGINT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX schedules_due ON schedules (next_at);
`;
