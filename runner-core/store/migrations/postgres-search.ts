/**
 * Finding runs on PostgreSQL: the indexes of the SQLite migration (sqlite-migration-search.ts),
 * with `text_pattern_ops` where a prefix is looked up: PostgreSQL compares text by the database's
 * collation, so a `LIKE 'prefix%'` can use a btree only through that operator class (or a "C"
 * database). `runs_url` serves both the exact URL (then newest first by id) and a URL prefix.
 */
export const PG_MIGRATION_SEARCH = `
  CREATE INDEX runs_url ON runs (url text_pattern_ops, id);
  CREATE INDEX runs_id_prefix ON runs (id text_pattern_ops);
  CREATE INDEX runs_created ON runs (created_at);
  CREATE INDEX steps_failed ON steps (name, run_id) WHERE status = 'failed';
`;
