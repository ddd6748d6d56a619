/**
 * Finding runs (`GET /v1/runs` filters, run-list-sql.ts): one index per filter that the primary
 * key and `runs_status (status, id)` do not serve already. An id prefix is a range of the primary
 * key; a URL prefix a range of `runs_url`.
 *
 * `steps_failed` is partial: it holds failed steps only, so the steps of runs that go well (nearly
 * all of them) never touch it, and finding the runs whose step "charge" failed reads those rows alone.
 */
export const SQLITE_MIGRATION_SEARCH = `
  CREATE INDEX runs_url ON runs(url, id);
  CREATE INDEX runs_created ON runs(created_at, id);
  CREATE INDEX steps_failed ON steps(name, run_id) WHERE status = 'failed';
`;
