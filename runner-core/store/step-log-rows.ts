import type { LogLine } from '../../protocol/step-logs.js';
import type { StepLog } from './types.js';

/**
 * Step logs as rows, shared by both dialects: one row per step execution that printed something,
 * keyed by (run, position, attempt). The lines stay one JSON text, as the route sent them (already
 * bounded per execution, protocol/step-logs.ts): they are only ever read back whole, per run.
 */
export interface StepLogRow {
  run_id: string;
  idx: number;
  attempt: number;
  name: string;
  status: string;
  at: number | string;
  lines: string;
  dropped: number;
}

export function toStepLog(row: StepLogRow): StepLog {
  return {
    runId: row.run_id,
    index: row.idx,
    name: row.name,
    attempt: row.attempt,
    status: row.status === 'failed' ? 'failed' : 'succeeded',
    at: Number(row.at),
    lines: JSON.parse(row.lines) as LogLine[],
    dropped: row.dropped,
  };
}

export function stepLogParams(log: StepLog): Record<string, unknown> {
  return {
    runId: log.runId,
    index: log.index,
    attempt: log.attempt,
    name: log.name,
    status: log.status,
    at: Math.round(log.at),
    lines: JSON.stringify(log.lines),
    dropped: log.dropped,
  };
}
