/**
 * Failure alerts on PostgreSQL, the same as SQLite's (sqlite-migration-alerts.ts): `alert` and
 * `alert_attempts`, and `runs_claimable` rebuilt with CLAIMABLE's new predicate spelled out (a failed
 * run stays claimable until its alert is delivered). `wfkit_apply` is replaced to write the two new
 * patch fields (the two `alert…` lines of the run patch); apart from them it is migration 2's
 * (postgres-migration-2.ts), which stays as shipped.
 */
export const PG_MIGRATION_ALERTS = `
  ALTER TABLE runs ADD COLUMN alert TEXT;
  ALTER TABLE runs ADD COLUMN alert_attempts INTEGER NOT NULL DEFAULT 0;
  DROP INDEX runs_claimable;
  CREATE INDEX runs_claimable ON runs (next_at) WHERE (status NOT IN ('completed', 'failed', 'cancelled') OR failure_call = 'pending' OR alert = 'pending');

  CREATE OR REPLACE FUNCTION wfkit_apply(changes JSONB, fence_owner TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE
    r RECORD;
    c JSONB;
    p JSONB;
    n INTEGER;
  BEGIN
    -- Lock the touched runs first, in id order (every transaction here locks runs in that order, so
    -- none can deadlock), and check the fence under those locks.
    FOR r IN SELECT id, lease_owner FROM runs
      WHERE id IN (SELECT x->>'runId' FROM jsonb_array_elements(changes) AS x)
      ORDER BY id FOR UPDATE
    LOOP
      IF fence_owner IS NOT NULL AND r.lease_owner IS DISTINCT FROM fence_owner THEN
        RAISE EXCEPTION 'lease lost' USING ERRCODE = 'WFL01', DETAIL = json_build_object('runId', r.id, 'holder', r.lease_owner)::text;
      END IF;
    END LOOP;

    FOR c IN SELECT x FROM jsonb_array_elements(changes) WITH ORDINALITY AS e(x, i) ORDER BY i LOOP
      CASE c->>'type'
      WHEN 'step-started' THEN
        INSERT INTO steps (run_id, idx, name, kind, status, started_at, reported_executions, failures, group_id)
        VALUES (c->>'runId', (c->>'index')::int, c->>'name', c->>'kind', 'running', (c->>'at')::bigint, 1, 0, (c->>'group')::int)
        ON CONFLICT (run_id, idx) DO UPDATE SET status = 'running', name = excluded.name, kind = excluded.kind,
          started_at = excluded.started_at, reported_executions = steps.reported_executions + 1, finished_at = NULL, duration_ms = NULL
        WHERE steps.status <> 'succeeded';
      WHEN 'step-suspended' THEN
        -- The first description of a position wins (a sleep keeps the wake-up time it was given first);
        -- a row its 'started' line made has none yet, so each field is filled once.
        INSERT INTO steps (run_id, idx, name, kind, status, started_at, reported_executions, failures, group_id, until, event_id, request)
        VALUES (c->>'runId', (c->>'index')::int, c->>'name', c->>'kind', 'running', (c->>'at')::bigint, 1, 0, (c->>'group')::int,
          (c->>'until')::bigint, c->>'eventId', c->>'request')
        ON CONFLICT (run_id, idx) DO UPDATE SET until = COALESCE(steps.until, excluded.until),
          event_id = COALESCE(steps.event_id, excluded.event_id), request = COALESCE(steps.request, excluded.request),
          group_id = COALESCE(steps.group_id, excluded.group_id)
        WHERE steps.status = 'running';
      WHEN 'executions-reported' THEN
        UPDATE steps SET reported_executions = reported_executions + (c->>'count')::int
        WHERE run_id = c->>'runId' AND idx = (c->>'index')::int;
      WHEN 'release' THEN
        UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = c->>'runId' AND lease_owner = c->>'owner';
      WHEN 'steps-closed' THEN
        UPDATE steps SET status = c->>'status', finished_at = (c->>'at')::bigint
        WHERE run_id = c->>'runId' AND status IN ('running', 'retrying');
      WHEN 'step-succeeded' THEN
        INSERT INTO steps (run_id, idx, name, kind, status, output, started_at, finished_at, duration_ms, reported_executions, failures)
        VALUES (c->>'runId', (c->>'index')::int, c->>'name', c->>'kind', 'succeeded', c->>'output', (c->>'startedAt')::bigint,
          (c->>'at')::bigint, (c->>'durationMs')::float8, 1, 0)
        ON CONFLICT (run_id, idx) DO UPDATE SET status = 'succeeded', output = excluded.output, error = NULL,
          finished_at = excluded.finished_at, duration_ms = excluded.duration_ms
        WHERE steps.status <> 'succeeded';
        -- No row: the step had already succeeded, and the first committed result wins.
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
          UPDATE runs SET steps_done = steps_done + 1 WHERE id = c->>'runId';
        END IF;
      WHEN 'step-failed' THEN
        INSERT INTO steps (run_id, idx, name, kind, status, error, started_at, finished_at, duration_ms, reported_executions, failures)
        VALUES (c->>'runId', (c->>'index')::int, c->>'name', c->>'kind', c->>'status', c->>'error', (c->>'startedAt')::bigint,
          (c->>'at')::bigint, (c->>'durationMs')::float8, 1, 1)
        ON CONFLICT (run_id, idx) DO UPDATE SET status = excluded.status, error = excluded.error,
          failures = steps.failures + 1, finished_at = excluded.finished_at, duration_ms = excluded.duration_ms
        WHERE steps.status <> 'succeeded';
      WHEN 'attempt' THEN
        INSERT INTO attempts (run_id, seq, started_at, duration_ms, request_url, request_headers, request_body,
          response_status, response_headers, response_body, outcome, error)
        VALUES (c->>'runId', (c->>'seq')::int, (c->>'startedAt')::bigint, (c->>'durationMs')::float8, c->>'requestUrl',
          c->>'requestHeaders', c->>'requestBody', (c->>'responseStatus')::int, c->>'responseHeaders', c->>'responseBody',
          c->>'outcome', c->>'error');
      WHEN 'run' THEN
        -- A present key sets the column (JSON null sets NULL); a finished run keeps its status, so a
        -- drive that settles after a cancel, or on another machine, cannot bring it back to life.
        p := c->'patch';
        UPDATE runs SET
          status = CASE WHEN p ? 'status' AND status NOT IN ('completed', 'failed', 'cancelled') THEN p->>'status' ELSE status END,
          next_at = CASE WHEN p ? 'nextAt' THEN (p->>'nextAt')::bigint ELSE next_at END,
          failures = CASE WHEN p ? 'failures' THEN (p->>'failures')::int ELSE failures END,
          finished_at = CASE WHEN p ? 'finishedAt' THEN (p->>'finishedAt')::bigint ELSE finished_at END,
          output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,
          error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
          attempts = CASE WHEN p ? 'attempts' THEN (p->>'attempts')::int ELSE attempts END,
          unreachable_since = CASE WHEN p ? 'unreachableSince' THEN (p->>'unreachableSince')::bigint ELSE unreachable_since END,
          failure_call = CASE WHEN p ? 'failureCall' THEN p->>'failureCall' ELSE failure_call END,
          failure_call_attempts = CASE WHEN p ? 'failureCallAttempts' THEN (p->>'failureCallAttempts')::int ELSE failure_call_attempts END,
          alert = CASE WHEN p ? 'alert' THEN p->>'alert' ELSE alert END,
          alert_attempts = CASE WHEN p ? 'alertAttempts' THEN (p->>'alertAttempts')::int ELSE alert_attempts END,
          updated_at = (c->>'at')::bigint
        WHERE id = c->>'runId';
        IF NOT FOUND THEN
          RAISE EXCEPTION 'Expected run % to exist for a run patch, but it was not found.', c->>'runId' USING ERRCODE = 'WFL02';
        END IF;
      ELSE
        RAISE EXCEPTION 'Expected a change type wfkit knows, got %.', c->>'type';
      END CASE;
    END LOOP;
  END
  $$;
`;
