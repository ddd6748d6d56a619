import { ProtocolError } from '../protocol/errors.js';
import {
  describe,
  expectInteger,
  expectObject,
  expectString,
  optionalNumber,
  optionalString,
  type Fields,
} from '../protocol/validate.js';
import { RUN_STATUSES, type RunStatus } from './dto.js';
import { checkFilterText, isEmptyRunFilter, type RunFilter } from './run-query.js';

/**
 * `POST /v1/runs/bulk`: one action on every run a filter matches. Shared by the runner (which parses
 * requests with it) and the `Client` (which parses answers), so both read the same contract.
 */
export type BulkActionName = 'resume' | 'cancel' | 'rerun';
export const BULK_ACTIONS: readonly BulkActionName[] = ['resume', 'cancel', 'rerun'];

/**
 * Which runs: the run list's filter (api/run-query.ts), so a bulk action acts on exactly what
 * `GET /v1/runs` with the same filter lists. Every field given must match; an empty filter matches
 * every run. Times are epoch ms.
 */
export type BulkFilter = RunFilter;

export interface BulkRequest {
  action: BulkActionName;
  filter: BulkFilter;
  /** Only count the matching runs (the confirmation's number); change nothing. */
  dryRun?: boolean;
}

export interface BulkResult {
  /** Runs the filter matched (at most `BULK_MAX_RUNS`). */
  matched: number;
  /** Runs the action succeeded on (0 on a dry run). */
  done: number;
  /** Runs the action was refused for (e.g. resuming a completed run), with why. */
  failed: { runId: string; code: string; message: string }[];
  /** More runs matched than one call acts on: call again (acted-on runs no longer match, for resume and cancel). */
  truncated: boolean;
}

/** At most this many runs per call: a bulk action is bounded, however many runs match. */
export const BULK_MAX_RUNS = 10_000;

/** True when no field narrows the filter (the `wf` command refuses this without `--all`). */
export function isEmptyFilter(filter: BulkFilter): boolean {
  return isEmptyRunFilter(filter);
}

export function parseBulkRequest(u: unknown, where = 'the bulk request'): BulkRequest {
  const o = expectObject(u, where);
  const action = o.action;
  if (!(BULK_ACTIONS as readonly unknown[]).includes(action)) {
    throw new ProtocolError(
      `Expected \`action\` in ${where} to be one of ${BULK_ACTIONS.join(', ')}, got ${describe(action)}.`,
    );
  }
  const f = o.filter === undefined ? {} : expectObject(o.filter, `\`filter\` in ${where}`);
  const filterWhere = `\`filter\` in ${where}`;
  const filter: BulkFilter = {};
  const status = f.status;
  const statuses = Array.isArray(status) ? status : status === undefined ? [] : [status];
  for (const one of statuses) {
    if (!(RUN_STATUSES as readonly unknown[]).includes(one)) {
      throw new ProtocolError(
        `Expected \`status\` in ${filterWhere} to be one of ${RUN_STATUSES.join(', ')} (or a list of them), got ${describe(one)}.`,
      );
    }
  }
  if (Array.isArray(status)) filter.status = statuses as RunStatus[];
  else if (status !== undefined) filter.status = status as RunStatus;
  for (const key of ['url', 'urlPrefix', 'failedStep', 'idPrefix'] as const) {
    const value = optionalString(f, key, filterWhere);
    if (value !== undefined) filter[key] = checkFilterText(value, `\`${key}\` in ${filterWhere}`);
  }
  for (const key of ['createdAfter', 'createdBefore'] as const) {
    const value = optionalNumber(f, key, filterWhere);
    if (value !== undefined) filter[key] = value;
  }
  if (o.dryRun !== undefined && typeof o.dryRun !== 'boolean') {
    throw new ProtocolError(`Expected \`dryRun\` in ${where} to be a boolean, got ${describe(o.dryRun)}.`);
  }
  return { action: action as BulkActionName, filter, ...(o.dryRun === true && { dryRun: true }) };
}

export function parseBulkResult(u: unknown, where = 'the bulk answer'): BulkResult {
  const o = expectObject(u, where);
  if (!Array.isArray(o.failed))
    throw new ProtocolError(`Expected \`failed\` in ${where} to be an array, got ${describe(o.failed)}.`);
  const failed = o.failed.map((item, i) => {
    const f: Fields = expectObject(item, `failed[${i}] in ${where}`);
    return {
      runId: expectString(f, 'runId', where),
      code: expectString(f, 'code', where),
      message: expectString(f, 'message', where),
    };
  });
  if (typeof o.truncated !== 'boolean')
    throw new ProtocolError(`Expected \`truncated\` in ${where} to be a boolean, got ${describe(o.truncated)}.`);
  return {
    matched: expectInteger(o, 'matched', where),
    done: expectInteger(o, 'done', where),
    failed,
    truncated: o.truncated,
  };
}
