/**
 * PostgreSQL migration: step logs, the same table as SQLite's (sqlite-migration-step-logs.ts), and
 * the function that writes them. `wfkit_apply` stays as it is: the store hands it the other
 * changes and, only when a commit carries step logs, calls `wfkit_apply_step_logs` in the same
 * statement right after it (postgres.ts), so both run in one transaction, after `wfkit_apply` has
 * locked the touched runs and checked the fence. The check here is for a run only the logs touch
 * (the runner never sends such a commit, but the store does not count on it): a plain read, so no
 * lock is taken out of id order, and a run without a holder passes, because `wfkit_apply` may just
 * have released this runner's lease in the same commit. No foreign key, as runs are never deleted:
 * its share lock on `runs` would only add work to the hot path.
 */
export const PG_MIGRATION_STEP_LOGS = `
  CREATE TABLE step_logs (
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    at BIGINT NOT NULL,
    lines TEXT NOT NULL,
    dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx, attempt)
  );

  CREATE FUNCTION wfkit_apply_step_logs(logs JSONB, fence_owner TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE
    r RECORD;
  BEGIN
    FOR r IN SELECT id, lease_owner FROM runs
      WHERE id IN (SELECT x->>'runId' FROM jsonb_array_elements(logs) AS x)
    LOOP
      IF fence_owner IS NOT NULL AND r.lease_owner IS NOT NULL AND r.lease_owner <> fence_owner THEN
        RAISE EXCEPTION 'lease lost' USING ERRCODE = 'WFL01', DETAIL = json_build_object('runId', r.id, 'holder', r.lease_owner)::text;
      END IF;
    END LOOP;
    INSERT INTO step_logs (run_id, idx, attempt, name, status, at, lines, dropped)
    SELECT x->>'runId', (x->>'index')::int, (x->>'attempt')::int, x->>'name', x->>'status', (x->>'at')::bigint, x->>'lines', (x->>'dropped')::int
    FROM jsonb_array_elements(logs) AS x
    ON CONFLICT (run_id, idx, attempt) DO NOTHING;
  END
  $$;
`;
