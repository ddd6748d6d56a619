/**
 * The statements that apply a change's rows (every `Change` but a run patch, which run-patch.ts
 * builds), written once for both stores: SQLite prepares them with named parameters (sqlite/store.ts),
 * PostgreSQL's `wfkit_apply` runs them on each change of its JSON array (postgres/functions.ts).
 * `value` spells how a dialect reads the change's field `name` as a column of `type`.
 */
export type ValueOf = (name: string, type?: 'int' | 'ms' | 'fraction') => string;

/** A step that succeeded is never changed again: every write to a step row keeps it. */
const KEEP_SUCCEEDED = `WHERE steps.status <> 'succeeded'`;

/**
 * Where the two inserts PostgreSQL runs on many changes at once (`stepSucceeded`, `attempt`) read
 * their rows: a FROM clause for a change type. Without it each statement inserts one change's
 * `VALUES`, as SQLite and the per-change loop of `wfkit_apply` run them.
 */
export type RowsOf = (type: 'step-succeeded' | 'attempt') => string;

export function writeStatements(value: ValueOf, rowsOf?: RowsOf) {
  const values = (type: Parameters<RowsOf>[0], list: string): string =>
    rowsOf ? `SELECT ${list} FROM ${rowsOf(type)}` : `VALUES (${list})`;
  const [runId, index, name, kind] = [value('runId'), value('index', 'int'), value('name'), value('kind')];
  const at = value('at', 'ms');
  const startedHere = value('startedHere', 'int');
  return {
    stepStarted: `INSERT INTO steps (run_id, idx, name, kind, status, started_at, reported_executions, failures,
        group_id)
      VALUES (${runId}, ${index}, ${name}, ${kind}, 'running', ${at}, 1, 0, ${value('group', 'int')})
      ON CONFLICT (run_id, idx) DO UPDATE SET status = 'running', name = excluded.name, kind = excluded.kind,
        started_at = excluded.started_at, reported_executions = steps.reported_executions + 1,
        finished_at = NULL, duration_ms = NULL
      ${KEEP_SUCCEEDED}`,
    // The first description of a position wins (a sleep keeps the wake-up time it was given first);
    // a row its `started` line made has none yet, so each field is filled once.
    stepSuspended: `INSERT INTO steps (run_id, idx, name, kind, status, started_at, reported_executions, failures,
        group_id, until, event_id, request)
      VALUES (${runId}, ${index}, ${name}, ${kind}, 'running', ${at}, 1, 0, ${value('group', 'int')},
        ${value('until', 'ms')}, ${value('eventId')}, ${value('request')})
      ON CONFLICT (run_id, idx) DO UPDATE SET until = COALESCE(steps.until, excluded.until),
        event_id = COALESCE(steps.event_id, excluded.event_id), request = COALESCE(steps.request, excluded.request),
        group_id = COALESCE(steps.group_id, excluded.group_id)
      WHERE steps.status = 'running'`,
    executionsReported: `UPDATE steps SET reported_executions = reported_executions + ${value('count', 'int')}
      WHERE run_id = ${runId} AND idx = ${index}`,
    release: `UPDATE runs SET lease_owner = NULL, lease_until = NULL
      WHERE id = ${runId} AND lease_owner = ${value('owner')}`,
    stepsClosed: `UPDATE steps SET status = ${value('status')}, finished_at = ${at}
      WHERE run_id = ${runId} AND status IN ('running', 'retrying')`,
    // `startedHere` is 1 when the change records the step's start too (Change `started`): then a row
    // an earlier attempt left is updated as stepStarted would (one more execution, its name and start).
    stepSucceeded: `INSERT INTO steps (run_id, idx, name, kind, status, output, started_at, finished_at, duration_ms,
        reported_executions, failures, group_id)
      ${values(
        'step-succeeded',
        `${runId}, ${index}, ${name}, ${kind}, 'succeeded', ${value('output')}, ${value('startedAt', 'ms')},
        ${at}, ${value('durationMs', 'fraction')}, 1, 0, ${value('group', 'int')}`,
      )}
      ON CONFLICT (run_id, idx) DO UPDATE SET status = 'succeeded', output = excluded.output, error = NULL,
        finished_at = excluded.finished_at, duration_ms = excluded.duration_ms,
        reported_executions = steps.reported_executions + ${startedHere},
        name = CASE WHEN ${startedHere} = 1 THEN excluded.name ELSE steps.name END,
        kind = CASE WHEN ${startedHere} = 1 THEN excluded.kind ELSE steps.kind END,
        started_at = CASE WHEN ${startedHere} = 1 THEN excluded.started_at ELSE steps.started_at END
      ${KEEP_SUCCEEDED}`,
    /**
     * `count` more steps of a run succeeded: after the `stepSucceeded`s that wrote a row (none: the
     * step had already succeeded, and the first result wins), summed per run and commit.
     */
    stepsDone: `UPDATE runs SET steps_done = steps_done + ${value('count', 'int')} WHERE id = ${runId}`,
    stepFailed: `INSERT INTO steps (run_id, idx, name, kind, status, error, started_at, finished_at, duration_ms,
        reported_executions, failures)
      VALUES (${runId}, ${index}, ${name}, ${kind}, ${value('status')}, ${value('error')}, ${value('startedAt', 'ms')},
        ${at}, ${value('durationMs', 'fraction')}, 1, 1)
      ON CONFLICT (run_id, idx) DO UPDATE SET status = excluded.status, error = excluded.error,
        failures = steps.failures + 1, finished_at = excluded.finished_at, duration_ms = excluded.duration_ms
      ${KEEP_SUCCEEDED}`,
    // The fields are attemptParams' (rows.ts).
    attempt: `INSERT INTO attempts (run_id, seq, started_at, duration_ms, request_url, request_headers, request_body,
        response_status, response_headers, response_body, outcome, error)
      ${values(
        'attempt',
        `${runId}, ${value('seq', 'int')}, ${value('startedAt', 'ms')}, ${value('durationMs', 'fraction')},
        ${value('requestUrl')}, ${value('requestHeaders')}, ${value('requestBody')}, ${value('responseStatus', 'int')},
        ${value('responseHeaders')}, ${value('responseBody')}, ${value('outcome')}, ${value('error')}`,
      )}`,
  };
}
