import type { Migration } from './dialect.js';

/**
 * 12: retention (runner-core/retention/): pruning walks finished runs oldest first, by when they
 * finished. `runs_finished` holds finished runs only (the same status list as the prune's query,
 * so the planner can use the partial index), ordered by `(finished_at, id)`: the prune's cursor.
 * Run-less QStash messages (a plain publish) that were settled are found by `qstash_messages_settled`.
 */
export const retention: Migration = () => `
  CREATE INDEX runs_finished ON runs (finished_at, id) WHERE status IN ('completed', 'failed', 'cancelled');
  CREATE INDEX qstash_messages_settled ON qstash_messages (updated_at) WHERE run_id IS NULL AND status != 'pending';
`;
