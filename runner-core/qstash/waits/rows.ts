import { FINISHED_RUN_STATUSES } from '../../store/types.js';
import { resultStepId, type Wait } from './waits.js';

/** The finished run statuses as an SQL list (constants, never input): a finished run's waits are dropped. */
export const ENDED_STATUSES_SQL = [...FINISHED_RUN_STATUSES].map((status) => `'${status}'`).join(', ');

/** A `qstash_waits` row, the same in both dialects (PostgreSQL's BIGINTs arrive as numbers). */
export interface WaitRow {
  run_id: string;
  event_id: string;
  step_id: number;
  waiter: string;
  created_at: number;
  deadline: number;
}

type StoredWaiter = Omit<Wait, 'runId' | 'eventId' | 'createdAt' | 'deadline'>;

export function waitRow(wait: Wait): WaitRow {
  const { runId, eventId, createdAt, deadline, ...rest } = wait;
  const waiter: StoredWaiter = rest;
  return {
    run_id: runId,
    event_id: eventId,
    step_id: resultStepId(wait.step),
    waiter: JSON.stringify(waiter),
    created_at: createdAt,
    deadline,
  };
}

export function toWait(row: WaitRow): Wait {
  const waiter = JSON.parse(row.waiter) as StoredWaiter;
  return {
    runId: row.run_id,
    eventId: row.event_id,
    createdAt: Number(row.created_at),
    deadline: Number(row.deadline),
    ...waiter,
  };
}
