import { errors as undiciErrors } from '../../egress/undici-parts.js';
import { ByteBudget } from '../../api/byte-budget.js';
import { attemptOutcome, type DeliveryEnd } from '../../../api/attempt-outcome.js';
import type { SerializedError } from '../../../protocol/errors.js';
import { describeError } from '../../telemetry/logger.js';
import { parseRetryAfter } from '../../drive/retry.js';
import { FINISHED_RUN_STATUSES, type Attempt, type Change, type Run } from '../../store/types.js';
import { EgressRefusedError, type EgressPurpose } from '../../egress/destinations.js';
import type { EgressGate } from '../../egress/gate.js';
import { isFull, type Slot } from '../../egress/slots.js';
import { ApiError, EndpointTimeoutError, OriginNotAllowedError } from '../../errors.js';
import { isUnreachable, UNREACHABLE_STATUSES } from '../../drive/transport.js';
import { unreachableDelay, type UnreachablePolicy } from '../../drive/unreachable.js';
import { WorkLoop } from '../../background/work-loop.js';
import { openHeaders, type EngineContext, type RunConfig } from '../context.js';
import { defaultRetryDelayMs, parseRetryDelay } from '../durations.js';
import { callbackSpec, failRun, failureSpec, type Answer, type EndedDelivery } from './follow-ups.js';
import { forwardable } from '../messages/spec.js';
import type { StoredMessage } from '../messages/store.js';
import { laterDeliveryHeaders } from '../publish/handover.js';
import { inlineListBody } from './run-list.js';
import { nonWorkflowDestination } from './non-workflow.js';
import { newMessage, publishMessages } from '../publish/publish.js';
import { deliveryTrace } from './trace.js';
import { commitDeliveryEnd } from './delivery-log.js';
import { RUN_LIST_CACHE_BYTES, RunListCache } from './list-cache.js';
import { deliveredStepChanges, readSdkStep } from '../sdk-steps.js';
import { runHeadersFor } from './run-headers.js';
import { signDelivery, type UpstashSigningKeys } from '../signature.js';
import { UpstashHeader, WorkflowHeader } from '../headers.js';

/**
 * Delivers due messages, as QStash does: claims them with leases (any runner on the database),
 * sends each to its destination signed with `Upstash-Signature`, and settles it. A run message
 * (a step) carries the run's messages up to its own as the body the SDK parses, or nothing when
 * that is larger than `inlineLimitBytes` (the SDK then fetches them, `GET /v2/workflows/runs/:id`).
 *
 * The answer decides: 2xx delivered; 489 with `Upstash-NonRetryable-Error` failed at once; 429
 * with `Retry-After` retried then; any other failure retried by the message's `Upstash-Retries`
 * and `Upstash-Retry-Delay` (QStash's backoff otherwise) and failed when they are spent. An app
 * that does not answer (refused connection, timeout, 502/503/504) is an outage, not a failure: it
 * is tried again on the runner's unreachable schedule and spends no retries (transport.ts,
 * unreachable.ts). A message failed for good fails its run and sends the failure callback; a call's
 * answer goes to its callback. Every delivery of a run's message is an attempt in the run's log,
 * credential headers redacted.
 */

/** Bytes of message bodies one worker holds at once: two of the largest default message (10 MiB) would not fit. */
export const DELIVERY_BODY_BUDGET_BYTES = 16 * 1024 * 1024;

export interface DeliveryOptions {
  context: EngineContext;
  owner: string;
  /** Every delivery goes out through the egress gate, in a slot at its destination's origin. */
  egress: EgressGate;
  signingKeys: UpstashSigningKeys;
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  unreachable: UnreachablePolicy;
  inlineLimitBytes: number;
  logBodyLimitBytes: number;
  /**
   * Largest answer body kept of a call (`context.call`: the answer goes to the workflow). Any other
   * answer is read only for the log and a failure callback: `logBodyLimitBytes` of it. So memory per
   * delivery in flight stays bounded.
   */
  maxResponseBytes: number;
  /** Bytes of message bodies claimed at once (a larger message goes alone). */
  bodyBudgetBytes: number;
  /** A delivery without `Upstash-Timeout` waits this long for its answer (QStash's longest, 15 min). */
  timeoutMs: number;
  /** A run's message deferred for want of a slot at its destination (the dashboards show why it waits). */
  onWaitingForSlot?: (runId: string | null) => void;
}

type Verdict =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: number; retried: number; error: SerializedError }
  | { kind: 'unreachable'; at: number; since: number }
  | { kind: 'failed'; error: SerializedError };

/** One request of a delivery, as `send` makes it through the egress gate. */
interface DeliveryRequest {
  slot: Slot;
  purpose: EgressPurpose;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** At most this much of the answer's body is read. */
  keepBytes: number;
  /** The runner's shutdown. */
  stopping: AbortSignal;
}

/** A delivery that ended with `verdict`, and what its end sends on (`sendOn`). */
interface SendOn extends EndedDelivery {
  verdict: Verdict;
  run: Run | undefined;
  config: RunConfig | undefined;
  /** Changes to commit with the delivery (the run's end takes them into its own commit). */
  changes: Change[];
  now: number;
}

/** A delivery of a run's message, judged: what its attempt in the run's log records. */
interface DeliveryRecord {
  runId: string;
  seq: number;
  message: StoredMessage;
  sent: Record<string, string>;
  body: string;
  answer: Answer | undefined;
  transportError: unknown;
  verdict: Verdict;
  startedAt: number;
  now: number;
}

/** A delivery in flight: when it started, and the step it runs when its message is a plan step. */
interface DeliveryStart {
  at: number;
  target: number | undefined;
}

/** The step a plan step message (`stepId` 0, a parallel branch about to run) runs; undefined for any other. */
function planTarget(body: string): number | undefined {
  // Most delivered bodies are results, some large: parsed only when it can be a plan step.
  if (!body.includes('"targetStep"')) return undefined;
  const step = readSdkStep(body);
  return step?.stepId === 0 && step.targetStep !== undefined && step.targetStep > 0 ? step.targetStep : undefined;
}

/**
 * How soon a message whose destination had no free slot is due again (plus up to as much jitter,
 * so the deferred ones of one origin do not all come back in the same claim).
 */
const SLOT_RECHECK_MS = 500;

/** What a message is, as the egress gate's destination policy names it (destinations.ts). */
function purposeOf(message: StoredMessage): EgressPurpose {
  if (message.callType === 'toCallback') return 'call';
  if (message.callType === 'failureCall') return 'failure-callback';
  if (message.callType === 'fromCallback') return 'callback';
  return 'delivery';
}

const clip = (text: string, limit: number): string =>
  text.length > limit ? `${text.slice(0, limit)}… [${text.length - limit} more characters]` : text;

/** What a failed answer says, for the run's error: the SDK's `{error, message}` when it sent one. */
function answerError(destination: string, answer: Answer): SerializedError {
  const text = answer.body.toString('utf8');
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof parsed.message === 'string')
      return { name: typeof parsed.error === 'string' ? parsed.error : 'Error', message: parsed.message };
  } catch {}
  return {
    name: 'DeliveryError',
    message: `${destination} answered ${answer.status}${text ? `: ${clip(text, 500)}` : ''}`,
  };
}

export class DeliveryWorker {
  private readonly options: DeliveryOptions;
  /** Claims due messages, keeps their leases while they are delivered, drains on stop (work-loop.ts). */
  private readonly loop: WorkLoop<StoredMessage>;
  /**
   * The deliveries in flight, by run (a parallel group has several): when each started, and the
   * step it runs when that is known (a plan step's `targetStep`).
   */
  private readonly runStarts = new Map<string, DeliveryStart[]>();
  /**
   * The bodies of the messages claimed here: a claim takes only what fits beside those in flight,
   * so a burst of large messages is delivered a few at a time, not all held at once.
   */
  private readonly bodies: ByteBudget;
  private readonly bodyHolds = new Map<string, () => void>();
  /** Each run's list as its last delivery here read it: the next reads only what follows. */
  private readonly lists = new RunListCache(RUN_LIST_CACHE_BYTES);

  constructor(options: DeliveryOptions) {
    this.options = options;
    this.bodies = new ByteBudget(options.bodyBudgetBytes);
    const { context, owner, leaseMs } = options;
    this.loop = new WorkLoop<StoredMessage>({
      name: 'QStash delivery',
      logger: context.logger,
      now: context.now,
      concurrency: options.concurrency,
      leaseMs,
      pollMs: options.pollMs,
      claim: async (limit) => {
        const claimed = await context.messages.claimDue({
          now: context.now(),
          limit,
          owner,
          leaseMs,
          maxBytes: this.bodies.available,
          atLeastOne: this.bodies.held === 0,
        });
        for (const message of claimed) this.bodyHolds.set(message.id, this.bodies.hold(message.spec.body.length));
        return claimed;
      },
      key: (message) => message.id,
      work: async (message, signal) => {
        try {
          await this.deliver(message, signal);
        } finally {
          this.bodyHolds.get(message.id)?.();
          this.bodyHolds.delete(message.id);
        }
        return false;
      },
      // The lease ends by itself and the message is delivered again then (at least once).
      failed: (message, error) =>
        context.logger.error(`delivering QStash message ${message.id} failed: ${describeError(error)}`, {
          runId: message.runId ?? undefined,
        }),
      renew: (ids) => context.messages.renew(ids, owner, context.now() + leaseMs),
      nextDueAt: () => context.messages.nextDueAt(),
    });
  }

  get inFlight(): number {
    return this.loop.size;
  }

  /**
   * The start of the delivery of `runId` in flight here that runs step `stepId`: its plan step's
   * delivery for a parallel branch, else the latest (see `EngineContext.deliveryStartedAt`).
   */
  startedAt(runId: string, stepId?: number): number | undefined {
    const starts = this.runStarts.get(runId);
    if (starts === undefined || starts.length === 0) return undefined;
    const planned = stepId === undefined ? undefined : starts.find((s) => s.target === stepId);
    return planned?.at ?? Math.max(...starts.map((s) => s.at));
  }

  start(): void {
    this.loop.start();
  }

  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }

  /** Looks for due messages now (coalesced). */
  wake(): void {
    this.loop.wake();
  }

  /** The run ended: its list is not read again. */
  runEnded(runId: string): void {
    this.lists.drop(runId);
  }

  private async deliver(message: StoredMessage, signal: AbortSignal): Promise<void> {
    const { context, owner } = this.options;
    const { store, messages, credentials } = context;
    let run: Run | undefined;
    let config: RunConfig | undefined;
    if (message.runId !== null) {
      run = await store.getRun(message.runId);
      // A finished run takes no more deliveries, but its failure callback (sent because it failed).
      if (!run || (FINISHED_RUN_STATUSES.has(run.status) && message.callType !== 'failureCall')) {
        this.lists.drop(message.runId);
        await messages.settle(message.id, owner, { status: 'cancelled' }, context.now());
        return;
      }
      const text = await messages.runConfig(message.runId);
      config = text === undefined ? undefined : (JSON.parse(text) as RunConfig);
    }
    const { spec } = message;
    let headers = openHeaders(credentials, spec.method, spec.destination, spec.headers, spec.sealed);
    // The run's forwarded headers (the user's, from its trigger) go with every delivery to the app, a
    // call's answer (`fromCallback`) too, as QStash sends them: an app that authorizes on one gets it
    // on each. Not to a call's target (its own headers only).
    const runHeaders = config && runHeadersFor(message.kind, message.callType);
    if (config && runHeaders) {
      const forwarded = openHeaders(credentials, 'POST', run!.url, config.forwarded, config.sealed);
      headers = { ...runHeaders(forwarded), ...headers };
      if (config.label !== null) headers[UpstashHeader.Label] = config.label;
    }
    let body = spec.body;
    if (message.kind === 'workflow' && message.runId !== null) {
      const runId = message.runId;
      const list = await this.lists.read(runId, message.seq, (after, upTo) => messages.runMessages(runId, upTo, after));
      // The app published this delivery's result since it was claimed (an earlier delivery's answer
      // landing after a restart, engine.publish settles it): sending it again would run the step again.
      if (list.find((m) => m.id === message.id)?.status === 'delivered') return;
      if (list[0]?.id !== message.id) headers = laterDeliveryHeaders(headers);
      // Too large to send: the SDK fetches the list itself (lazy fetch) when the body is empty.
      body = inlineListBody(list, this.options.inlineLimitBytes);
    }
    const startedAt = context.now();
    const sent: Record<string, string> = {
      ...forwardable(headers),
      [UpstashHeader.MessageId]: message.id,
      [UpstashHeader.Retried]: String(message.retried),
      ...(run && message.callType !== 'toCallback' && { [WorkflowHeader.CreatedAt]: String(run.createdAt) }),
      'user-agent': 'Upstash-QStash',
      [UpstashHeader.Signature]: signDelivery(this.options.signingKeys.current, spec.destination, body, startedAt),
    };
    const slot = this.options.egress.acquire(
      new URL(spec.destination),
      purposeOf(message),
      message.runId ?? message.id,
    );
    if (isFull(slot)) {
      // This runner has its share in flight at that origin: the message waits in the store, not in
      // a delivery slot, and spends no retry (`Upstash-Retried` unchanged).
      const now = context.now();
      await messages.settle(
        message.id,
        owner,
        { status: 'pending', dueAt: now + SLOT_RECHECK_MS + Math.round(Math.random() * SLOT_RECHECK_MS) },
        now,
      );
      if (slot.newlyWaiting) this.options.onWaitingForSlot?.(message.runId);
      return;
    }
    const keep = message.spec.callback ? this.options.maxResponseBytes : this.options.logBodyLimitBytes;
    const starts = run ? (this.runStarts.get(run.id) ?? []) : undefined;
    const start: DeliveryStart = {
      at: startedAt,
      target: message.kind === 'workflow' ? planTarget(spec.body) : undefined,
    };
    if (run && starts) {
      starts.push(start);
      this.runStarts.set(run.id, starts);
    }
    let sentOff: Awaited<ReturnType<DeliveryWorker['send']>>;
    try {
      sentOff = await this.send({
        slot,
        purpose: purposeOf(message),
        url: spec.destination,
        method: spec.method,
        headers: sent,
        body,
        timeoutMs: spec.timeoutMs ?? this.options.timeoutMs,
        keepBytes: keep,
        stopping: signal,
      });
    } finally {
      slot.release();
      if (run && starts) {
        starts.splice(starts.indexOf(start), 1);
        if (starts.length === 0) this.runStarts.delete(run.id);
      }
    }
    // Its answer read (or its request failed): what the app published meanwhile may go now.
    const toApp = message.kind === 'workflow' || message.callType === 'fromCallback';
    if (run && toApp) await this.releaseHeld(run.id, message.id);
    const { answer, transportError } = sentOff;
    if (answer === undefined && this.loop.stopped) {
      // Aborted by the runner's shutdown: not the message's failure. Due again at once, for whoever runs next.
      await messages.settle(message.id, owner, { status: 'pending', dueAt: context.now() }, context.now());
      return;
    }
    const verdict = this.judge(message, answer, transportError, context.now(), config?.restTrigger === true);
    const now = context.now();
    const changes: Change[] = [];
    if (run) {
      const seq = await messages.nextAttemptSeq(run.id, now);
      changes.push({
        type: 'attempt',
        attempt: this.attemptRecord({
          runId: run.id,
          seq,
          message,
          sent,
          body,
          answer,
          transportError,
          verdict,
          startedAt,
          now,
        }),
      });
      const status = answer?.status ?? null;
      const trace = deliveryTrace({
        message,
        purpose: purposeOf(message),
        seq,
        status,
        end: verdict,
        transportError,
        startedAt,
        endedAt: now,
      });
      context.tracing?.delivery?.(run, trace);
      if (message.callType !== 'toCallback' && !FINISHED_RUN_STATUSES.has(run.status)) {
        // What the dashboards show of a run between its steps: an outage, and the failed tries of the step at hand.
        const unreachableSince = verdict.kind === 'unreachable' ? verdict.since : null;
        const failures = verdict.kind === 'retry' ? verdict.retried : verdict.kind === 'delivered' ? 0 : run.failures;
        if (unreachableSince !== run.unreachableSince || failures !== run.failures)
          changes.push({ type: 'run', runId: run.id, patch: { unreachableSince, failures }, at: now });
      }
    }
    // A call that got no answer reports a gateway's status to the workflow: 504 for a timeout, else
    // 502, with what went wrong in one line (never the runner's stack: the app is another party).
    const timedOut =
      transportError instanceof undiciErrors.HeadersTimeoutError || transportError instanceof EndpointTimeoutError;
    const answered: Answer = answer ?? {
      status: timedOut ? 504 : 502,
      headers: {},
      body: Buffer.from(
        transportError instanceof Error ? `${transportError.name}: ${transportError.message}` : String(transportError),
      ),
    };
    const retried = verdict.kind === 'retry' ? verdict.retried : message.retried;
    // What the follow-ups are built from, once the message's end is known (a delivery or a failure for good).
    const ended = { message, verdict, answer: answered, requestHeaders: sent, retried, run, config, changes, now };
    if (verdict.kind === 'delivered') {
      // A step delivered later than published (a sleep) succeeds now; the others did when published
      // (committing them again would change nothing but announce them twice).
      if (message.kind === 'workflow' && run && message.dueAt > message.createdAt) {
        const step = readSdkStep(spec.body);
        if (step) changes.push(...deliveredStepChanges(run.id, step, now, message.createdAt));
      }
      if (message.callType === 'failureCall' && run) {
        // A route without failureFunction says so: then there was none to call.
        const none = answer?.headers[WorkflowHeader.FailureCallbackNotFound] === 'true';
        changes.push({
          type: 'run',
          runId: run.id,
          patch: { failureCall: none ? null : 'delivered', failureCallAttempts: run.failureCallAttempts + 1 },
          at: now,
        });
      }
      await this.sendOn(ended);
      await messages.settle(message.id, owner, { status: 'delivered', unreachableSince: null }, now);
    } else if (verdict.kind === 'retry') {
      await messages.settle(
        message.id,
        owner,
        { status: 'pending', dueAt: verdict.at, retried: verdict.retried, unreachableSince: null },
        now,
      );
    } else if (verdict.kind === 'unreachable') {
      await messages.settle(
        message.id,
        owner,
        { status: 'pending', dueAt: verdict.at, unreachableSince: verdict.since },
        now,
      );
    } else {
      await this.sendOn(ended);
      await messages.settle(message.id, owner, { status: 'failed' }, now);
    }
    // A wait's end published between the answer and the settle held itself behind this delivery (publish-hold.ts).
    if (run && toApp) await this.releaseHeld(run.id, message.id);
    await commitDeliveryEnd(context, changes);
  }

  /**
   * Lets go of what the app published during delivery `deliveryId` (publish-hold.ts): what this
   * worker has room for is sent at once, leased to it in the same write (no claim in between: the
   * next step of a sequential run leaves as soon as the answer is read), the rest is left to any
   * claim. A store that fails here leaves the holds to end with the delivery's lease, which this
   * runner stops renewing.
   */
  private async releaseHeld(runId: string, deliveryId: string): Promise<void> {
    const { context, owner, leaseMs } = this.options;
    try {
      const now = context.now();
      const { taken, released } = await context.messages.takeHeld(runId, deliveryId, {
        owner,
        until: now + leaseMs,
        now,
        limit: this.loop.room,
        maxBytes: this.bodies.available,
        atLeastOne: this.bodies.held === 0,
      });
      for (const message of taken) {
        this.bodyHolds.set(message.id, this.bodies.hold(message.spec.body.length));
        this.loop.launch(message);
      }
      if (released > 0) context.wake();
    } catch (error) {
      const what = `releasing what was published during QStash message ${deliveryId}`;
      context.logger.error(`${what} failed: ${describeError(error)}`, { runId });
    }
  }

  /** What follows a message's end: a call's callback, a failure's callback and its run's end. */
  private async sendOn({
    message,
    verdict,
    answer,
    requestHeaders,
    retried,
    run,
    config,
    changes,
    now,
  }: SendOn): Promise<void> {
    const { context } = this.options;
    if (message.spec.callback) {
      // A call's answer, whatever it is, goes to the workflow: the SDK hands non-2xx answers to the code as data.
      const spec = callbackSpec(context, { message, answer, requestHeaders, retried });
      if (spec) {
        try {
          await publishMessages(context, [spec]);
        } catch (error) {
          // Refused (the run ended meanwhile): nothing waits for it. Anything else (the store) is
          // thrown: the message stays unsettled and is delivered again once its lease ends.
          if (!(error instanceof ApiError || error instanceof OriginNotAllowedError)) throw error;
          context.logger.error(`the callback of QStash message ${message.id} was not sent: ${describeError(error)}`, {
            runId: message.runId ?? undefined,
          });
        }
      }
      return;
    }
    if (verdict.kind !== 'failed') return;
    if (message.callType === 'failureCall') {
      if (run)
        changes.push({
          type: 'run',
          runId: run.id,
          patch: { failureCall: 'failed', failureCallAttempts: run.failureCallAttempts + 1 },
          at: now,
        });
      return;
    }
    const followUp = message.spec.failureCallback ?? (run ? config?.failureCallback : null) ?? null;
    if (followUp) {
      const spec = failureSpec(context, followUp, { message, answer, requestHeaders, retried }, run);
      // One failure callback per failed run (or plain message): inserted before the run's end is
      // committed, so a crash in between redelivers the failing message, and its second failure
      // finds this key taken instead of queueing a second callback.
      await context.messages.insertMessages([
        { ...newMessage(context, spec, now), dedupKey: `failure-callback:${message.runId ?? message.id}` },
      ]);
      context.wake();
    }
    // The run's end (run-end/), committed with this delivery's attempt.
    if (run && !FINISHED_RUN_STATUSES.has(run.status))
      await failRun(context, {
        run,
        error: verdict.error,
        failureCallback: followUp !== null,
        logged: changes.splice(0),
        at: now,
      });
  }

  private judge(
    message: StoredMessage,
    answer: Answer | undefined,
    transportError: unknown,
    now: number,
    restTrigger: boolean,
  ): Verdict {
    const { unreachable } = this.options;
    const toApp = message.callType !== 'toCallback';
    // No answer (refused, reset, DNS, timeout: transport.ts's cases) is an outage, as a 502/503/504 is;
    // a request that could not even be made (undici refusing it) is the message's failure.
    const outage = answer === undefined ? isUnreachable(transportError) : UNREACHABLE_STATUSES.has(answer.status);
    if (toApp && outage) {
      const since = message.unreachableSince ?? now;
      if (now - since >= unreachable.horizonMs) {
        return {
          kind: 'failed',
          error: {
            name: 'AppUnreachableError',
            code: 'APP_UNREACHABLE',
            message: `${message.spec.destination} has not answered since ${new Date(since).toISOString()}.`,
          },
        };
      }
      const retryAfter = answer?.status === 503 ? parseRetryAfter(answer.headers['retry-after'], now) : undefined;
      return { kind: 'unreachable', since, at: now + unreachableDelay(since, now, unreachable, retryAfter) };
    }
    const notAWorkflow = answer && nonWorkflowDestination(message, answer, restTrigger);
    if (notAWorkflow) return { kind: 'failed', error: notAWorkflow };
    if (answer && answer.status >= 200 && answer.status < 300) return { kind: 'delivered' };
    const error: SerializedError = answer
      ? answerError(message.spec.destination, answer)
      : { name: 'DeliveryError', message: describeError(transportError) };
    // A destination the egress gate refuses (its rule, destinations.ts) is refused again: no retry.
    if (answer === undefined && EgressRefusedError.is(transportError))
      return {
        kind: 'failed',
        error: { name: 'EgressRefusedError', code: 'EGRESS_REFUSED', message: transportError.message },
      };
    if (answer?.status === 489 && answer.headers[UpstashHeader.NonRetryableError] === 'true')
      return { kind: 'failed', error };
    if (message.retried >= message.spec.retries) return { kind: 'failed', error };
    const retried = message.retried + 1;
    const retryAfter = answer?.status === 429 ? parseRetryAfter(answer.headers['retry-after'], now) : undefined;
    const delay =
      retryAfter ??
      (message.spec.retryDelay !== null
        ? parseRetryDelay(message.spec.retryDelay)(retried)
        : defaultRetryDelayMs(retried));
    return { kind: 'retry', retried, at: now + Math.round(delay), error };
  }

  private async send({
    slot,
    purpose,
    url,
    method,
    headers,
    body,
    timeoutMs,
    keepBytes,
    stopping,
  }: DeliveryRequest): Promise<{ answer?: Answer; transportError?: unknown }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new EndpointTimeoutError(url)), timeoutMs);
    try {
      // The SDK answers after running the step: the agent's drive timeouts (answer headers within
      // 30 s) do not fit, the message's own timeout does. At most `keepBytes` of the answer are read.
      const answer = await this.options.egress.read(
        {
          purpose,
          slot,
          url: new URL(url),
          method,
          headers,
          body,
          signal: AbortSignal.any([controller.signal, stopping]),
          headersTimeoutMs: timeoutMs,
          bodyTimeoutMs: timeoutMs,
        },
        keepBytes,
      );
      return { answer };
    } catch (error) {
      return { transportError: error };
    } finally {
      clearTimeout(timer);
    }
  }

  private attemptRecord(record: DeliveryRecord): Attempt {
    const { message, sent, answer, transportError, verdict, startedAt, now } = record;
    const { credentials } = this.options.context;
    const limit = this.options.logBodyLimitBytes;
    const hideBody = message.spec.redact.includes('body');
    const hideHeaders = message.spec.redact.includes('header');
    const named = message.spec.redact
      .filter((part) => /^header\[.+\]$/.test(part))
      .map((part) => part.slice(7, -1).toLowerCase());
    let requestHeaders = credentials.redact(sent);
    if (hideHeaders)
      requestHeaders = Object.fromEntries(Object.keys(requestHeaders).map((name) => [name, '[redacted]']));
    for (const name of named) if (name in requestHeaders) requestHeaders[name] = '[redacted]';
    const end: DeliveryEnd = verdict.kind === 'delivered' ? 'done' : verdict.kind;
    return {
      runId: record.runId,
      seq: record.seq,
      startedAt,
      durationMs: Math.max(0, now - startedAt),
      requestUrl: `${message.spec.method} ${message.spec.destination}`.replace(/^POST /, ''),
      requestHeaders,
      requestBody: hideBody ? '[redacted]' : clip(record.body, limit),
      responseStatus: answer?.status ?? null,
      responseHeaders: answer ? credentials.redact(answer.headers) : null,
      responseBody: answer ? (hideBody ? '[redacted]' : clip(answer.body.toString('utf8'), limit)) : null,
      outcome: attemptOutcome({
        to:
          message.callType === 'failureCall'
            ? 'failure-function'
            : message.callType === 'toCallback'
              ? 'call'
              : 'route',
        end,
      }),
      error:
        verdict.kind === 'failed' || verdict.kind === 'retry'
          ? verdict.error
          : transportError === undefined
            ? null
            : { name: 'TransportError', message: describeError(transportError) },
    };
  }
}
