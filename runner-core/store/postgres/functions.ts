import { UNFINISHED } from '../claimable.js';
import { patchAssignments, type PatchColumnType } from '../run-patch.js';
import { writeStatements } from '../write-sql.js';

/*
 * The PostgreSQL store's writes as server-side functions, each called as ONE statement: the whole
 * group commit, the fence check included, runs in that statement's transaction on the server. So no
 * transaction of ours ever waits on the client between two statements: a runner frozen mid-commit
 * (SIGSTOP, a VM pause, a long GC) holds no row lock while its leases run out, and other runners take
 * its runs over on time. (It also never leaves the client library a transaction to roll back on a
 * connection the server closed, where postgres.js 3.4 crashes, porsager/postgres#1208.)
 *
 * Defined here once, as they are now, and not in the migrations: `migratePostgres`
 * (migrations/postgres.ts) re-creates them all with CREATE OR REPLACE at every start, in the
 * migration transaction, after the table changes and under the same advisory lock. A database at
 * any version gets today's functions; a change to one is a change to this file. CREATE OR REPLACE
 * cannot change a function's parameters or result type: such a change needs a migration that drops
 * the old function first.
 *
 * The statements are the SQLite store's: each change's from write-sql.ts, a run patch's from
 * run-patch.ts, read here from JSON instead of bound parameters. `changes` is
 * the JSON array changes.ts makes: every value is already a column value (JSON columns as
 * text, times in whole milliseconds), and a run patch carries only the fields it sets.
 */

/** How `wfkit_apply` reads a field of a JSON object (`c` a change, `p` its run patch; `x`, `q` the same in a set) as a column's type. */
function field(object: 'c' | 'p' | 'x' | 'q', name: string, type: PatchColumnType | 'fraction' = 'text'): string {
  const cast = { text: '', json: '', int: '::int', ms: '::bigint', fraction: '::float8' }[type];
  return cast === '' ? `${object}->>'${name}'` : `(${object}->>'${name}')${cast}`;
}

/** The change statements both stores share (write-sql.ts), on the fields of the change `c`. */
const w = writeStatements((name, type) => field('c', name, type));

/** Commits of fewer changes than this go through `wfkit_apply`'s loop whole (see there). */
const SET_SHARE_FROM = 32;

/** The changes of `batched` (the set statements' share of a commit, see `wfkit_apply`) of one type, each as `x`. */
const batchedOf = (type: string): string =>
  `jsonb_array_elements(changes) WITH ORDINALITY AS a(x, i) WHERE batched[i] AND x->>'type' = '${type}'`;

/**
 * The same statements on many changes at once: the inserts read every batched change of their type.
 * ON CONFLICT … DO UPDATE sees only the row and `excluded`, not the change `x`, so a step-succeeded
 * is written by one of two statements, by whether it records its step's start (`startedHere`, then
 * a constant in each).
 */
const setOf = (startedHere: 0 | 1) =>
  writeStatements(
    (name, type) => (name === 'startedHere' ? String(startedHere) : field('x', name, type)),
    (type) => `${batchedOf(type)}${type === 'step-succeeded' ? ` AND x->>'startedHere' = '${startedHere}'` : ''}`,
  );
const [set, setStarted] = [setOf(0), setOf(1)];

/** A run patch's SET lines, one per field of RUN_PATCH_FIELDS (run-patch.ts): a present key of `object` sets the column. */
const patchLines = (object: 'p' | 'q'): string =>
  patchAssignments({
    isSet: (name) => `${object} ? '${name}'`,
    value: (name, { type }) => field(object, name, type),
  }).join(',\n          ');

export const PG_FUNCTIONS = `
  -- The changes go in two shares. Most of a commit is one 'step-succeeded' per step, an 'attempt',
  -- a 'run' patch and a 'release' per run, each touching rows no other change of the commit
  -- touches: those ("batched") are written by one statement per table over the whole set, which
  -- costs the server a fraction of one statement per change, and each run's row gets ONE new
  -- version (its patch, its release and its count of steps done together) instead of three. A
  -- change that shares its rows with another of the commit (a step started and finished in it, two
  -- patches or releases of a run, a step of a run whose steps are closed in it) and every other type
  -- go through the loop, one statement each, in their order. The two shares never write the same
  -- columns of a row (attempts are only inserted; a release sets only the lease columns, a patch
  -- only its own, steps_done only counts), so which goes first changes nothing.
  CREATE OR REPLACE FUNCTION wfkit_apply(changes JSONB, fence_owner TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
  DECLARE
    r RECORD;
    c JSONB;
    p JSONB;
    n INTEGER;
    batched BOOLEAN[];
    some_batched BOOLEAN;
    missing TEXT;
    -- Steps that succeeded in this commit, by run: added to steps_done once per run at the end.
    done JSONB;
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

    -- batched[i]: whether the change at position i is in the set share (an array read by position,
    -- so picking a share costs one lookup per change, not a search of a list). A small commit goes
    -- through the loop whole: the set statements cost the server a fixed ~0.6 ms per commit, which
    -- pays off only from a few runs' worth of changes on.
    IF jsonb_array_length(changes) < ${SET_SHARE_FROM} THEN
      batched := array_fill(false, ARRAY[jsonb_array_length(changes)]);
    ELSE
      SELECT array_agg(t = 'attempt' OR (t IN ('run', 'release') AND same_type = 1)
          OR (t = 'step-succeeded' AND same_step = 1 AND closed = 0) ORDER BY i) INTO batched FROM (
        SELECT i, x->>'type' AS t,
          count(*) FILTER (WHERE x ? 'index') OVER (PARTITION BY x->>'runId', x->>'index') AS same_step,
          count(*) FILTER (WHERE x->>'type' = 'steps-closed') OVER (PARTITION BY x->>'runId') AS closed,
          count(*) OVER (PARTITION BY x->>'runId', x->>'type') AS same_type
        FROM jsonb_array_elements(changes) WITH ORDINALITY AS a(x, i)
      ) AS k;
    END IF;
    some_batched := true = ANY(batched);
    done := '{}';

    IF some_batched THEN
      ${set.attempt};
      -- Each returns the rows it wrote (none for a step that had already succeeded: the first result wins).
      WITH succeeded AS (
        ${set.stepSucceeded}
        RETURNING run_id
      ), succeeded_started AS (
        ${setStarted.stepSucceeded}
        RETURNING run_id
      )
      SELECT COALESCE(jsonb_object_agg(run_id, k), '{}') INTO done FROM (
        SELECT run_id, count(*) AS k FROM (SELECT run_id FROM succeeded UNION ALL SELECT run_id FROM succeeded_started) AS s
        GROUP BY run_id
      ) AS d;
    END IF;

    FOR c IN SELECT x FROM jsonb_array_elements(changes) WITH ORDINALITY AS a(x, i) WHERE NOT batched[i] ORDER BY i LOOP
      CASE c->>'type'
      WHEN 'step-started' THEN
        ${w.stepStarted};
      WHEN 'step-suspended' THEN
        ${w.stepSuspended};
      WHEN 'executions-reported' THEN
        ${w.executionsReported};
      WHEN 'release' THEN
        ${w.release};
      WHEN 'steps-closed' THEN
        ${w.stepsClosed};
      WHEN 'step-succeeded' THEN
        ${w.stepSucceeded};
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
          done := jsonb_set(done, ARRAY[c->>'runId'], to_jsonb(COALESCE((done->>(c->>'runId'))::int, 0) + 1));
        END IF;
      WHEN 'step-failed' THEN
        ${w.stepFailed};
      WHEN 'attempt' THEN
        ${w.attempt};
      WHEN 'run' THEN
        -- A present key sets the column (JSON null sets NULL); a finished run keeps its status, so a
        -- drive that settles after a cancel, or on another machine, cannot bring it back to life.
        p := c->'patch';
        UPDATE runs SET
          ${patchLines('p')},
          updated_at = (c->>'at')::bigint
        WHERE id = c->>'runId';
        IF NOT FOUND THEN
          RAISE EXCEPTION 'Expected run % to exist for a run patch, but it was not found.', c->>'runId' USING ERRCODE = 'WFL02';
        END IF;
      ELSE
        RAISE EXCEPTION 'Expected a change type wfkit knows, got %.', c->>'type';
      END CASE;
    END LOOP;

    IF some_batched OR done <> '{}' THEN
      -- Each run's row once: its batched patch (as the loop's 'run' above; none: NULL, every column
      -- kept), its batched release (the lease of the runner named; the SQLite store's release), and
      -- the steps that succeeded in this commit (the SQLite store's stepsDone, write-sql.ts).
      WITH per_run AS (
        SELECT x->>'runId' AS run_id,
          (array_agg(x->'patch') FILTER (WHERE x->>'type' = 'run'))[1] AS q,
          max((x->>'at')::bigint) FILTER (WHERE x->>'type' = 'run') AS at,
          max(x->>'owner') FILTER (WHERE x->>'type' = 'release') AS releaser
        FROM jsonb_array_elements(changes) WITH ORDINALITY AS a(x, i)
        WHERE batched[i] AND x->>'type' IN ('run', 'release')
        GROUP BY 1
      ), counted AS (
        SELECT key AS run_id, value::int AS k FROM jsonb_each_text(done)
      ), patched AS (
        UPDATE runs SET
            ${patchLines('q')},
            updated_at = COALESCE(b.at, runs.updated_at),
            lease_owner = CASE WHEN runs.lease_owner = b.releaser THEN NULL ELSE runs.lease_owner END,
            lease_until = CASE WHEN runs.lease_owner = b.releaser THEN NULL ELSE runs.lease_until END,
            steps_done = runs.steps_done + b.k
          FROM (
            SELECT COALESCE(per_run.run_id, counted.run_id) AS run_id, q, at, releaser, COALESCE(k, 0) AS k
            FROM per_run FULL JOIN counted ON counted.run_id = per_run.run_id
          ) AS b
          WHERE runs.id = b.run_id
          RETURNING runs.id
      )
      SELECT min(run_id) INTO missing FROM per_run WHERE q IS NOT NULL AND run_id NOT IN (SELECT id FROM patched);
      IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'Expected run % to exist for a run patch, but it was not found.', missing USING ERRCODE = 'WFL02';
      END IF;
    END IF;
  END
  $$;

  -- notify. A notify and a wait registered at the same moment must not miss each other: in SQLite
  -- every write transaction is serialized, here (READ COMMITTED) a notify could read "nobody waits"
  -- while the wait commits, and the wait's take_event read "nothing kept" before the notify's kept
  -- event commits. So both take a transaction-scoped advisory lock on the event id's hash first. A
  -- runner commits a wait before it calls take_event (suspensions.ts), so whichever of the two takes
  -- the lock second sees the other's work. (A hash collision only serializes two ids.) The waiting
  -- runs are locked in id order before their steps change, the order wfkit_apply locks runs in.
  CREATE OR REPLACE FUNCTION wfkit_deliver_event(lock_key TEXT, p_event_id TEXT, p_data TEXT, p_output TEXT, p_now BIGINT, p_keep_until BIGINT)
  RETURNS SETOF TEXT LANGUAGE plpgsql AS $$
  DECLARE
    woke TEXT[];
  BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(lock_key));
    DELETE FROM events WHERE keep_until <= p_now;
    PERFORM 1 FROM runs
      WHERE id IN (SELECT run_id FROM steps WHERE event_id = p_event_id AND status = 'running' AND kind = 'wait')
        AND ${UNFINISHED}
      ORDER BY id FOR UPDATE;
    WITH resolved AS (
      UPDATE steps SET status = 'succeeded', output = p_output, finished_at = p_now, duration_ms = p_now - started_at
      WHERE event_id = p_event_id AND status = 'running' AND kind = 'wait'
        AND run_id IN (SELECT id FROM runs WHERE ${UNFINISHED})
      RETURNING run_id
    ), counted AS (
      UPDATE runs SET steps_done = runs.steps_done + c.n, next_at = p_now, updated_at = p_now
      FROM (SELECT run_id, count(*)::int AS n FROM resolved GROUP BY run_id) AS c
      WHERE runs.id = c.run_id
      RETURNING runs.id
    )
    SELECT array_agg(id ORDER BY id) INTO woke FROM counted;
    IF woke IS NULL THEN
      INSERT INTO events (event_id, data, created_at, keep_until) VALUES (p_event_id, p_data, p_now, p_keep_until);
      RETURN;
    END IF;
    RETURN QUERY SELECT unnest(woke);
  END
  $$;

  -- takeEvent: the oldest kept, unexpired event of the id, removed; under the same lock as notify.
  CREATE OR REPLACE FUNCTION wfkit_take_event(lock_key TEXT, p_event_id TEXT, p_now BIGINT) RETURNS TEXT LANGUAGE plpgsql AS $$
  DECLARE
    taken TEXT;
  BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(lock_key));
    DELETE FROM events WHERE seq = (
      SELECT seq FROM events WHERE event_id = p_event_id AND keep_until > p_now ORDER BY seq LIMIT 1
    ) RETURNING data INTO taken;
    RETURN taken;
  END
  $$;

  -- Step logs: the store hands wfkit_apply the other changes and, only when a commit carries step
  -- logs, calls this in the same statement right after it (store.ts), so both run in one
  -- transaction, after wfkit_apply has locked the touched runs and checked the fence. The check here
  -- is for a run only the logs touch (the runner never sends such a commit, but the store does not
  -- count on it): a plain read, so no lock is taken out of id order, and a run without a holder
  -- passes, because wfkit_apply may just have released this runner's lease in the same commit.
  CREATE OR REPLACE FUNCTION wfkit_apply_step_logs(logs JSONB, fence_owner TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
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
