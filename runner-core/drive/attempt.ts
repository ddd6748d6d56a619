import { serializeError, type SerializedError } from '../../protocol/errors.js';
import { Header, NDJSON, PROTOCOL_VERSION } from '../../protocol/headers.js';
import type { DriveRequest, StepRecord } from '../../protocol/messages.js';
import {
  OutcomeLineSplitter,
  decodeOutcome,
  isTerminal,
  type Outcome,
  type TerminalOutcome,
} from '../../protocol/outcome.js';
import type { CallCredentials } from './call-credentials.js';
import { postToEndpoint } from './dispatch.js';
import { EgressRefusedError } from '../egress/destinations.js';
import type { EgressGate } from '../egress/gate.js';
import type { Slot } from '../egress/slots.js';
import { EndpointError } from '../errors.js';
import { parseRetryAfter } from './retry.js';
import { signDrive } from './sign.js';
import { ChunkChanges } from './chunk-changes.js';
import { stepLogsChange } from './step-logs.js';
import { isUnreachable, UNREACHABLE_STATUSES } from './transport.js';
import { attemptOutcome } from '../../api/attempt-outcome.js';
import type { Attempt, Change, Run } from '../store/types.js';
import type { Tracing } from '../telemetry/tracing.js';

export interface AttemptContext {
  /** The way out: drive requests go through the egress gate (destination rule, caps). */
  egress: EgressGate;
  tokens: readonly string[];
  now: () => number;
  /** Past this many bytes of step outputs the route fetches them instead. */
  inlineStepsLimitBytes: number;
  /**
   * How long after sending a drive request the route may still accept it and start new steps: the
   * shorter of the drive timeout (the runner stops waiting) and the lease (another runner may take over).
   */
  driveDeadlineMs: number;
  /** Request and response bodies kept in the attempt log, in bytes. */
  logBodyLimitBytes: number;
  /** Redacts credential headers in the log, and seals a suspend's call credentials before they are committed. */
  credentials: CallCredentials;
  /** Hands step changes over as they arrive; resolves once committed. */
  commit: (changes: Change[]) => Promise<void>;
  /** Spans for each drive and its steps, only when traces are exported (`undefined`: nothing to do). */
  tracing?: Tracing | undefined;
}

export interface AttemptResult {
  attempt: Attempt;
  /** Some step succeeded during this attempt. */
  progressed: boolean;
  /** The route's terminal line, or what went wrong on the way. */
  end: TerminalOutcome | AttemptError;
  /**
   * With `holdLast`: the step changes that came with the terminal line, not committed yet. The
   * caller commits them first in its settle commit, so the last steps and the end share one fsync.
   */
  held?: Change[];
}

/** What went wrong on the way instead of a terminal line. */
export interface AttemptError {
  t: 'error';
  error: SerializedError;
  retryable: boolean;
  retryAfterMs?: number;
  /**
   * The app did not answer (refused or reset connection, DNS error, timeout, 502/503/504, a stream
   * cut before its terminal line): not the step's failure, retried on the unreachable schedule.
   */
  unreachable?: boolean;
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : text.slice(0, limit) + `\n… [${text.length - limit} more characters not kept]`;
}

function driveBody(
  run: Run,
  committed: readonly StepRecord[],
  limit: number,
  failure: DriveRequest['failure'],
): string {
  let size = 0;
  for (const step of committed) size += (step.output?.length ?? 0) + step.name.length;
  const message: DriveRequest = {
    v: PROTOCOL_VERSION,
    runId: run.id,
    body: run.body,
    headers: run.headers,
    steps: size > limit ? null : [...committed],
    attempt: run.failures + 1,
  };
  if (failure) message.failure = failure;
  return JSON.stringify(message);
}

/** A `started` or `step` line as the store change that records it. */
function stepChange(runId: string, outcome: Exclude<Outcome, TerminalOutcome>, at: number): Change {
  const { index, name, kind } = outcome;
  if (outcome.t === 'started') return { type: 'step-started', runId, index, name, kind, group: outcome.group, at };
  return {
    type: 'step-succeeded',
    runId,
    index,
    name,
    kind,
    output: outcome.output ?? null,
    at,
    durationMs: outcome.durationMs,
  };
}

/** 5xx, 408, 425 and 429 may heal by themselves; other statuses need a change to the app. */
function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 425 || status === 429;
}

function errorDetail(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message;
  } catch {}
  return text.slice(0, 300);
}

/** One drive request to make: the run, what it has committed, and the slot it goes out in. */
export interface AttemptRequest {
  /** The caller's slot at the run's origin (`EgressGate.acquire`), held until `runAttempt` returns. */
  slot: Slot;
  run: Run;
  committed: readonly StepRecord[];
  signal: AbortSignal;
  /** Set for a failureFunction call: the failure it is told of. */
  failure?: DriveRequest['failure'];
  /** Hand the step changes read with (or after) the terminal line back in `held` instead of committing them. */
  holdLast?: boolean;
}

/**
 * One drive request: sign, POST, read the outcome stream, hand each step to `commit` as it
 * arrives. Never throws: every problem becomes an `error` end, recorded in the attempt. `slot` is
 * the caller's at the run's origin (`EgressGate.acquire`), held until this returns.
 */
export async function runAttempt(
  ctx: AttemptContext,
  { slot, run, committed, signal, failure, holdLast = false }: AttemptRequest,
): Promise<AttemptResult> {
  const startedAt = ctx.now();
  const body = driveBody(run, committed, ctx.inlineStepsLimitBytes, failure);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [Header.ProtocolVersion]: String(PROTOCOL_VERSION),
    [Header.RunId]: run.id,
    [Header.Attempt]: String(run.failures + 1),
    ...signDrive(run.url, body, ctx.tokens, startedAt + ctx.driveDeadlineMs),
  };
  const trace = ctx.tracing?.attempt(run, {
    seq: run.attempts + 1,
    attempt: run.failures + 1,
    startedAt,
    failureFunction: failure !== undefined,
  });
  // The app's own spans nest under this drive's (the header is logged with the others).
  if (trace?.traceparent) headers[Header.Traceparent] = trace.traceparent;
  const attempt: Attempt = {
    runId: run.id,
    seq: run.attempts + 1,
    startedAt,
    durationMs: 0,
    requestUrl: run.url,
    requestHeaders: ctx.credentials.redact(headers),
    requestBody: clip(body, ctx.logBodyLimitBytes),
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    outcome: 'error',
    error: null,
  };
  let progressed = false;
  let text = '';
  const commits: Promise<void>[] = [];
  const held: Change[] = [];
  const finish = (end: AttemptResult['end']): AttemptResult => {
    attempt.durationMs = ctx.now() - startedAt;
    attempt.responseBody = attempt.responseStatus === null ? null : clip(text, ctx.logBodyLimitBytes);
    attempt.outcome = attemptOutcome({ to: failure ? 'failure-function' : 'route', end: end.t });
    if (end.t === 'error' || end.t === 'failed') attempt.error = end.error;
    trace?.end(attempt.responseStatus, end, startedAt + attempt.durationMs);
    return held.length > 0 ? { attempt, progressed, end, held } : { attempt, progressed, end };
  };

  // Every line goes to the log (a malformed one as it came), a call's credentials redacted.
  const decodeLogged = (line: string): Outcome => {
    let outcome: Outcome | undefined;
    try {
      return (outcome = decodeOutcome(line));
    } finally {
      if (text.length < ctx.logBodyLimitBytes) text += (outcome ? ctx.credentials.logLine(line, outcome) : line) + '\n';
    }
  };

  try {
    const response = await postToEndpoint(ctx.egress, {
      purpose: failure ? 'failure-call' : 'drive',
      slot,
      url: run.url,
      headers,
      body,
      signal,
    });
    attempt.responseStatus = response.status;
    attempt.responseHeaders = ctx.credentials.redact(response.headers);
    const isStream = response.status === 200 && (response.headers['content-type'] ?? '').startsWith(NDJSON);
    if (!isStream) {
      for await (const chunk of response.chunks)
        if (text.length < ctx.logBodyLimitBytes) text += Buffer.from(chunk).toString('utf8');
      const error = new EndpointError(
        response.status,
        run.url,
        errorDetail(text) || 'expected an NDJSON outcome stream',
      );
      const retryAfterMs = parseRetryAfter(response.headers[Header.RetryAfter], ctx.now());
      const end: AttemptError = {
        t: 'error',
        error: serializeError(error),
        retryable: retryableStatus(response.status),
      };
      if (UNREACHABLE_STATUSES.has(response.status)) end.unreachable = true;
      if (retryAfterMs !== undefined) end.retryAfterMs = retryAfterMs;
      return finish(end);
    }
    const splitter = new OutcomeLineSplitter();
    let terminal: TerminalOutcome | undefined;
    for await (const chunk of response.chunks) {
      const changes = new ChunkChanges();
      const at = ctx.now();
      // A malformed line ends the attempt; the steps that started before it in this chunk still
      // count (the route ran them), so what was read is handed over whatever happens next.
      try {
        for (const line of splitter.push(chunk)) {
          const outcome = decodeLogged(line);
          if (isTerminal(outcome)) terminal = ctx.credentials.sealOutcome(outcome);
          else {
            changes.add(stepChange(run.id, outcome, at));
            if (outcome.t === 'step') {
              progressed = true;
              const logs = stepLogsChange(run.id, attempt.seq, outcome, 'succeeded', at);
              if (logs) changes.add(logs);
            }
            trace?.step(outcome, at);
          }
        }
      } finally {
        const list = changes.list();
        // Nothing acts on these steps before the run's settle commit: they can share it.
        if (list.length > 0 && holdLast && terminal) held.push(...list);
        else if (list.length > 0) commits.push(ctx.commit(list));
      }
    }
    await Promise.all(commits);
    if (!terminal) {
      const error = new EndpointError(
        200,
        run.url,
        'the outcome stream ended without a terminal line (the route crashed or the connection dropped)',
      );
      return finish({ t: 'error', error: serializeError(error), retryable: true, unreachable: true });
    }
    return finish(terminal);
  } catch (error) {
    await Promise.allSettled(commits);
    // A destination the gate refuses (its origin no longer allowed) is refused again: no retry.
    const retryable = !(error instanceof Error && (error.name === 'ProtocolError' || EgressRefusedError.is(error)));
    const end: AttemptError = { t: 'error', error: serializeError(error), retryable };
    if (isUnreachable(error)) end.unreachable = true;
    return finish(end);
  }
}
