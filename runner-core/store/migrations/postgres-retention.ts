/** Retention on PostgreSQL: the same indexes as the SQLite migration (sqlite-migration-retention.ts). */
export const PG_MIGRATION_RETENTION = `
  CREATE INDEX runs_finished ON runs (finished_at, id) WHERE status IN ('completed', 'failed', 'cancelled');
  CREATE INDEX qstash_messages_settled ON qstash_messages (updated_at) WHERE run_id IS NULL AND status != 'pending';
`;
