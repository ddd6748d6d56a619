import type { FlowControl } from '../../protocol/flow-control.js';
import type { CallCredentials } from '../drive/call-credentials.js';
import type { Commit } from '../commit/commit-queue.js';
import type { EventBus } from '../commit/events.js';
import type { Logger } from '../telemetry/logger.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { OriginPattern } from '../egress/origins.js';
import type { RunEnds } from '../run-end/run-ends.js';
import type { Store } from '../store/types.js';
import type { SdkStep } from './sdk-steps.js';
import type { FollowUp, MessageSpec } from './messages/spec.js';
import type { MessageStore } from './messages/store.js';

/** What a publish answers for each message (QStash's `{messageId, url, deduplicated?}`). */
export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated?: boolean;
}

/** Who invoked a run (`context.invoke`, invoke.ts), kept in its config: where and how its result goes back. */
export interface Invoker {
  runId: string;
  url: string;
  headers: Record<string, string>;
  sealed?: string;
  step: SdkStep;
}

/** What the QStash engine's parts share (built once by `QStashEngine`). */
export interface EngineContext {
  store: Store;
  messages: MessageStore;
  /** The runner's commit: group-committed through its queue, then announced to the dashboards. */
  commit: Commit;
  events: EventBus;
  credentials: CallCredentials;
  /** The runner's list (the same array `allowOrigin` adds to). */
  allowedOrigins: readonly OriginPattern[];
  now: () => number;
  logger: Logger;
  /** Called after messages were stored: the worker looks for due ones at once. */
  wake: () => void;
  /**
   * Stores messages the engine itself sends on (a call's callback, an invoked run's result, a
   * wait's end): publish.ts, as for an app's publish, but during no delivery of the app.
   */
  publish: (specs: readonly MessageSpec[]) => Promise<PublishResult[]>;
  /**
   * When the delivery of the run now in flight here that runs step `stepId` started, if any: the app
   * runs a step while it handles a delivery and publishes the result before answering, so a result's
   * duration is the time since (the SDK does not report how long its step ran). A parallel branch's
   * delivery is the one of its plan step; otherwise the latest in flight. The step row keeps it
   * exactly (`finishedAt - durationMs` = that attempt's `startedAt`): how the dashboards link an
   * Upstash step to its attempts (view/attempts.ts).
   */
  deliveryStartedAt: (runId: string, stepId?: number) => number | undefined;
  /** How a run ends (run-end/): the engine completes, cancels and fails its runs there, as the native driver does. */
  ends: RunEnds;
  /** The runner's tracer, when traces are exported: each delivery of a run's message is a span. */
  tracing?: Tracing | undefined;
}

/** A follow-up message as stored: its credential header values sealed. */
export type StoredFollowUp = FollowUp & { sealed?: string };

/** Settings a run's first message gave the whole run (`qstash_runs.config`). */
export interface RunConfig {
  /** The first message's `Upstash-Forward-*` headers (sealed like a message's): every delivery of the run carries them. */
  forwarded: Record<string, string>;
  sealed?: string;
  retries: number;
  retryDelay: string | null;
  failureCallback: StoredFollowUp | null;
  label: string | null;
  /** Every delivery of the run's steps counts against it (the first message's `Upstash-Flow-Control-*`). */
  flowControl: FlowControl | null;
  /** Set when `context.invoke` started the run: its result goes back to the invoker (invoke.ts). */
  invoker?: Invoker;
  /** Started by `POST /v2/trigger`: its endpoint must answer as an SDK of v1 or later (non-workflow.ts). */
  restTrigger?: boolean;
}

/** Seals the credential values of `headers` (see call-credentials.ts), bound to `method url`. */
export function sealHeaders(
  credentials: CallCredentials,
  method: string,
  url: string,
  headers: Record<string, string>,
): { headers: Record<string, string>; sealed?: string } {
  const stored = credentials.seal({ method, url, headers });
  return stored.sealed === undefined ? { headers: stored.headers } : { headers: stored.headers, sealed: stored.sealed };
}

/** The real header values back in place. Throws `CredentialsError` when no configured token sealed them. */
export function openHeaders(
  credentials: CallCredentials,
  method: string,
  url: string,
  headers: Record<string, string>,
  sealed: string | undefined,
): Record<string, string> {
  return sealed === undefined ? headers : credentials.open({ method, url, headers, sealed }).headers;
}
