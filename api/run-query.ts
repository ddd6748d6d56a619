import { ProtocolError } from '../protocol/errors.js';
import { RUN_STATUSES, type RunStatus } from './dto.js';

/**
 * Finding runs: the filters of `GET /v1/runs` (and of bulk actions), their query-string form and
 * its parser. One contract for the runner (which parses requests with it), the `Client` (which
 * writes them with it) and the dashboards. Every field given must match; none matches every run.
 */
export interface RunFilter {
  /** One status or several (any of them). */
  status?: RunStatus | readonly RunStatus[];
  /** The run's workflow URL, exactly. */
  url?: string;
  /** The run's workflow URL starts with this (e.g. an origin, or `https://app/api/`). */
  urlPrefix?: string;
  /** Created at or after this time (epoch ms). */
  createdAfter?: number;
  /** Created before this time (epoch ms). */
  createdBefore?: number;
  /** A step of this name failed (for good; a retried attempt does not count). */
  failedStep?: string;
  /** The run id starts with this (a pasted, shortened id). */
  idPrefix?: string;
}

/** A page of the run list: a filter, newest first, `cursor` the last id of the previous page. */
export interface RunListQuery extends RunFilter {
  cursor?: string;
  limit?: number;
  /** The runs a schedule started (its own listing; the other filters do not apply to it). */
  scheduleId?: string;
}

/** The longest text filter accepted: a URL or an id, never a document. */
export const MAX_FILTER_TEXT = 2048;

const TEXT_FILTERS = ['url', 'urlPrefix', 'failedStep', 'idPrefix'] as const;
const TIME_FILTERS = ['createdAfter', 'createdBefore'] as const;

/** The statuses a filter names, as a list (empty when it names none). */
export function filterStatuses(filter: RunFilter): readonly RunStatus[] {
  const { status } = filter;
  return status === undefined ? [] : typeof status === 'string' ? [status as RunStatus] : status;
}

/** True when no field narrows the filter. */
export function isEmptyRunFilter(filter: RunFilter): boolean {
  return (
    filterStatuses(filter).length === 0 && [...TEXT_FILTERS, ...TIME_FILTERS].every((key) => filter[key] === undefined)
  );
}

/** The query string of a list query (statuses comma-separated, times as epoch ms); empty fields left out. */
export function runQueryParams(query: RunListQuery): URLSearchParams {
  const params = new URLSearchParams();
  const statuses = filterStatuses(query);
  if (statuses.length > 0) params.set('status', statuses.join(','));
  for (const key of TEXT_FILTERS) if (query[key] !== undefined && query[key] !== '') params.set(key, query[key]);
  for (const key of TIME_FILTERS) if (query[key] !== undefined) params.set(key, String(query[key]));
  if (query.scheduleId !== undefined) params.set('scheduleId', query.scheduleId);
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  return params;
}

/**
 * A time given as epoch milliseconds (digits) or an ISO 8601 date / date-time
 * (`2026-01-31`, `2026-01-31T12:00:00Z`); undefined when it is neither.
 */
export function parseTimeText(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d{1,16}$/.test(trimmed)) return Number(trimmed);
  // Only ISO-looking text: Date.parse also takes "1", "March 7" and other guesses we would not mean.
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(trimmed))
    return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : at;
}

/**
 * A text filter as the stores can take it: at most `MAX_FILTER_TEXT` characters and no NUL
 * (PostgreSQL text cannot hold one, so it would be a server error there rather than no match).
 */
export function checkFilterText(value: string, what: string): string {
  if (value.length > MAX_FILTER_TEXT)
    throw new ProtocolError(`Expected ${what} to be at most ${MAX_FILTER_TEXT} characters, got ${value.length}.`);
  if (value.includes('\0'))
    throw new ProtocolError(`Expected ${what} without NUL characters, got one at ${value.indexOf('\0')}.`);
  return value;
}

/** Reads one query parameter; a repeated one (other than `status`) is refused rather than guessed at. */
function single(params: URLSearchParams, key: string): string | undefined {
  const values = params.getAll(key);
  if (values.length > 1)
    throw new ProtocolError(`Expected the query parameter \`${key}\` at most once, got it ${values.length} times.`);
  return values[0];
}

/**
 * The filter of `GET /v1/runs?…` (the paging parameters are the route's). Throws a
 * `ProtocolError` naming the parameter, what it expects and what came (the API answers 400).
 * An empty text parameter is no filter (a cleared search box sends `url=`).
 */
export function parseRunFilterParams(params: URLSearchParams): RunFilter {
  const filter: RunFilter = {};
  const statusTexts = params
    .getAll('status')
    .flatMap((value) => value.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const status of statusTexts) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) {
      throw new ProtocolError(
        `Expected the query parameter \`status\` to be one or more of ${RUN_STATUSES.join(', ')} (comma-separated), got "${status.slice(0, 64)}".`,
      );
    }
  }
  const statuses = [...new Set(statusTexts)] as RunStatus[];
  if (statuses.length === 1) filter.status = statuses[0]!;
  else if (statuses.length > 1) filter.status = statuses;
  for (const key of TEXT_FILTERS) {
    const value = single(params, key);
    if (value === undefined || value === '') continue;
    filter[key] = checkFilterText(value, `the query parameter \`${key}\``);
  }
  for (const key of TIME_FILTERS) {
    const value = single(params, key);
    if (value === undefined || value === '') continue;
    const at = parseTimeText(value);
    if (at === undefined) {
      throw new ProtocolError(
        `Expected the query parameter \`${key}\` to be a time as epoch milliseconds or an ISO 8601 date like 2026-01-31T12:00:00Z, got "${value.slice(0, 64)}".`,
      );
    }
    filter[key] = at;
  }
  return filter;
}

/**
 * Whether a run matches a filter, as the store decides it: for a live list that places the runs
 * events bring. Undefined when the run alone cannot tell (`failedStep` needs its steps): the list
 * then keeps what the runner listed and adds nothing from events.
 */
export function matchesRunFilter(
  run: { id: string; url: string; status: RunStatus; createdAt: number },
  filter: RunFilter,
): boolean | undefined {
  const statuses = filterStatuses(filter);
  if (statuses.length > 0 && !statuses.includes(run.status)) return false;
  if (filter.url !== undefined && run.url !== filter.url) return false;
  if (filter.urlPrefix !== undefined && !run.url.startsWith(filter.urlPrefix)) return false;
  if (filter.idPrefix !== undefined && !run.id.startsWith(filter.idPrefix)) return false;
  if (filter.createdAfter !== undefined && run.createdAt < filter.createdAfter) return false;
  if (filter.createdBefore !== undefined && run.createdAt >= filter.createdBefore) return false;
  return filter.failedStep === undefined ? true : undefined;
}
