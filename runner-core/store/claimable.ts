/**
 * The runs a runner may claim: unfinished ones, and failed ones whose failureFunction call or failure
 * alert is still to be delivered (their status never changes again; only the delivery's fields do). Both stores
 * spell it identically in the partial index `runs_claimable` and in every query that should use it,
 * so SQLite's and PostgreSQL's planners match the index.
 */
export const CLAIMABLE = `(status NOT IN ('completed', 'failed', 'cancelled') OR failure_call = 'pending' OR alert = 'pending')`;

/** The runs that are not finished (a patch sets `status` only on those: run-patch.ts). */
export const UNFINISHED = `status NOT IN ('completed', 'failed', 'cancelled')`;
