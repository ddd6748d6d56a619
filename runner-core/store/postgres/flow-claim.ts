import type { Sql } from 'postgres';
import { CLAIMABLE } from '../claimable.js';
import { admit, type FlowCandidate } from '../flow-admission.js';
import { ms } from './changes.js';
import type { RunRow } from '../rows.js';

export interface FlowClaimInput {
  now: number;
  take: number;
  owner: string;
  leaseMs: number;
  /** Leases timed by the database's clock (see `leaseClock`), or by `now`. */
  databaseClock: boolean;
}

/** Due rows read beyond the claim's limit, so runs of a full key do not starve other keys. */
const FLOW_LOOKAHEAD = 16;

/**
 * Claims due flow-controlled runs across several runners without exceeding any key's limits.
 *
 * Race-freedom: one transaction takes a transaction-scoped advisory lock per key (`hashtext` of the
 * key, in ascending hash order so two claimers never deadlock) before counting the key's executing
 * runs and recent starts. A second runner claiming the same key waits on the lock until the first
 * commits; under READ COMMITTED its counts, read after the lock, then see the first one's leases.
 * Counting under `FOR UPDATE` instead would not do: the runs that make a key full are the ones
 * another runner holds, and the rows that would free a slot are not the ones being locked.
 *
 * The first query is a plain read outside any transaction, so a claim that finds no flow run due
 * costs no lock.
 */
export async function claimFlowRuns(
  sql: Sql<{ bigint: number }>,
  input: FlowClaimInput,
): Promise<{ rows: RunRow[]; waiting: string[] }> {
  const { now, take, owner, leaseMs, databaseClock } = input;
  const dbNow = '(floor(extract(epoch from now()) * 1000))::bigint';
  const leaseNow = databaseClock ? sql.unsafe(dbNow) : sql`${ms(now)}::bigint`;
  const due = sql`${sql.unsafe(CLAIMABLE)} AND flow_key IS NOT NULL AND next_at IS NOT NULL AND next_at <= ${ms(now)}
    AND (lease_until IS NULL OR lease_until < ${leaseNow}) AND (flow_wait_until IS NULL OR flow_wait_until <= ${ms(now)})`;
  const keyRows = await sql<{ flow_key: string }[]>`SELECT DISTINCT flow_key FROM runs WHERE ${due}`;
  if (keyRows.length === 0) return { rows: [], waiting: [] };
  const keys = keyRows.map((row) => row.flow_key);
  return sql.begin(async (tx) => {
    const txLeaseNow = databaseClock ? tx.unsafe(dbNow) : tx`${ms(now)}::bigint`;
    const txLeaseEnd = databaseClock
      ? tx`(${tx.unsafe(dbNow)} + ${ms(leaseMs)}::bigint)`
      : tx`${ms(now + leaseMs)}::bigint`;
    await tx`SELECT pg_advisory_xact_lock(h) FROM (
      SELECT DISTINCT hashtext('wfkit.flow.' || k) AS h FROM unnest(${keys}::text[]) AS k ORDER BY h) AS locks`;
    const candidates = await tx<(RunRow & FlowCandidate)[]>`SELECT * FROM runs
      WHERE flow_key = ANY(${keys}) AND ${tx.unsafe(CLAIMABLE)} AND next_at IS NOT NULL AND next_at <= ${ms(now)}
        AND (lease_until IS NULL OR lease_until < ${txLeaseNow}) AND (flow_wait_until IS NULL OR flow_wait_until <= ${ms(now)})
      ORDER BY next_at, created_at, id LIMIT ${take * 2 + FLOW_LOOKAHEAD}
      FOR UPDATE SKIP LOCKED`;
    const usage = new Map<string, { executing: number; startedInPeriod: number; oldestStart: number | null }>();
    for (const key of new Set(candidates.map((row) => row.flow_key as string))) {
      const periodMs = candidates.find((row) => row.flow_key === key)?.flow_period_ms ?? 1000;
      const [row] = await tx<{ executing: number; started: number; oldest: number | null }[]>`SELECT
          (SELECT COUNT(*) FROM runs WHERE flow_key = ${key} AND ${tx.unsafe(CLAIMABLE)}
            AND lease_owner IS NOT NULL AND lease_until >= ${txLeaseNow})::int AS executing,
          COUNT(*)::int AS started, MIN(flow_started_at) AS oldest
        FROM runs WHERE flow_key = ${key} AND flow_started_at > ${ms(now - Number(periodMs))}`;
      usage.set(key, {
        executing: row?.executing ?? 0,
        startedInPeriod: row?.started ?? 0,
        oldestStart: row?.oldest ?? null,
      });
    }
    const { admitted, parked } = admit(candidates, take, now, (key) => usage.get(key)!);
    if (parked.length > 0) {
      await tx`UPDATE runs SET flow_wait_until = p.until, flow_wait_reason = p.reason
        FROM unnest(${parked.map((p) => p.id)}::text[], ${parked.map((p) => p.until)}::bigint[], ${parked.map((p) => p.reason)}::text[]) AS p(id, until, reason)
        WHERE runs.id = p.id`;
    }
    const before = new Map(candidates.map((row) => [row.id, row.flow_wait_reason]));
    const waiting = parked.filter((wait) => before.get(wait.id) !== wait.reason).map((wait) => wait.id);
    if (admitted.length === 0) return { rows: [], waiting };
    const rows = await tx<RunRow[]>`UPDATE runs SET lease_owner = ${owner}, lease_until = ${txLeaseEnd},
        flow_started_at = COALESCE(flow_started_at, ${ms(now)}), flow_wait_until = NULL, flow_wait_reason = NULL
      WHERE id = ANY(${admitted.map((row) => row.id)}) RETURNING *`;
    return { rows: [...rows], waiting };
  }) as Promise<{ rows: RunRow[]; waiting: string[] }>;
}
