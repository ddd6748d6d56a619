import type { Migration } from './dialect.js';

/**
 * 8: finding runs (`GET /v1/runs` filters, run-list-sql.ts): one index per filter that the primary
 * key and `runs_status (status, id)` do not serve already. An id prefix is a range of the primary
 * key (SQLite) or of `runs_id_prefix`; a URL prefix a range of `runs_url`, which also serves the
 * exact URL (then newest first by id). PostgreSQL compares text by the database's collation, so a
 * `LIKE 'prefix%'` uses a btree only through `text_pattern_ops` (or a "C" database).
 *
 * `steps_failed` is partial: it holds failed steps only, so the steps of runs that go well (nearly
 * all of them) never touch it, and finding the runs whose step "charge" failed reads those rows alone.
 */
export const search: Migration = (d) =>
  d.name === 'sqlite'
    ? `
  CREATE INDEX runs_url ON runs (url, id);
  CREATE INDEX runs_created ON runs (created_at, id);
  CREATE INDEX steps_failed ON steps (name, run_id) WHERE status = 'failed';
`
    : `
  CREATE INDEX runs_url ON runs (url text_pattern_ops, id);
  CREATE INDEX runs_id_prefix ON runs (id text_pattern_ops);
  CREATE INDEX runs_created ON runs (created_at);
  CREATE INDEX steps_failed ON steps (name, run_id) WHERE status = 'failed';
`;
