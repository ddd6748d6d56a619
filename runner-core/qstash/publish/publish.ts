import { createHash, randomBytes } from 'node:crypto';
import { childIdempotencyKey } from '../../../api/links.js';
import { announce } from '../../commit/announce.js';
import { checkCallTarget } from '../../egress/call-target.js';
import { OriginNotAllowedError } from '../../errors.js';
import { originAllowed } from '../../egress/origins.js';
import { DEFAULT_RETRIES } from '../../drive/retry.js';
import { FINISHED_RUN_STATUSES, type Change } from '../../store/types.js';
import {
  sealHeaders,
  type EngineContext,
  type PublishResult,
  type RunConfig,
  type StoredFollowUp,
} from '../context.js';
import type { DeliveryRef } from '../delivery/in-progress.js';
import { defaultRetryDelayMs, parseRetryDelay } from '../durations.js';
import { badRequest, invokerRefused, runNotRunning } from '../errors.js';
import { forwardedHeader, WorkflowHeader } from '../headers.js';
import type { FollowUp, MessageSpec } from '../messages/spec.js';
import type { NewMessage, PublishedMessage, StoredSpec } from '../messages/store.js';
import { invokeStepChanges, readInvokeRequest } from '../invoke.js';
import { publishedStepChanges, readSdkStep, stepKind, type SdkStep } from '../sdk-steps.js';
import { publishedStep, stepKey } from './step-identity.js';
import { dueAt } from './wake-time.js';
import { HANDOVER_CALL_TYPE, handoverKey, isSdkHandover } from './handover.js';

export type { PublishResult } from '../context.js';

/**
 * Accepting published messages (`/v2/publish`, `/v2/batch`): a run's first message creates the run,
 * its later ones join the run's message list (and its steps show up as rows), any other message is
 * queued for delivery. Everything is stored before the publish is answered: the SDK goes on only
 * after QStash said yes, and so a message the runner acknowledged is never lost.
 */

/** QStash message ids look like `msg_…`. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** The run row's backoff base (what the dashboards show): the first retry's delay of the run's policy. */
function firstRetryDelayMs(retryDelay: string | null): number {
  return retryDelay === null ? defaultRetryDelayMs(1) : parseRetryDelay(retryDelay)(1);
}

/** What a run's later messages take from the run when they say nothing. */
type RunDefaults = Pick<RunConfig, 'retries' | 'retryDelay' | 'flowControl'>;

function checkOrigin(context: EngineContext, url: string): void {
  if (!originAllowed(url, context.allowedOrigins))
    throw new OriginNotAllowedError(
      url,
      context.allowedOrigins.map((p) => p.text),
    );
}

function storedFollowUp(context: EngineContext, followUp: FollowUp | undefined): StoredFollowUp | null {
  if (!followUp) return null;
  checkOrigin(context, followUp.url);
  const sealed = sealHeaders(context.credentials, 'POST', followUp.url, followUp.headers);
  return { url: followUp.url, ...sealed };
}

/** The message as stored; `runDefaults` fills what a run's later messages leave to the run (retries, backoff). */
export function storedSpec(context: EngineContext, spec: MessageSpec, runDefaults?: RunDefaults): StoredSpec {
  const sealed = sealHeaders(context.credentials, spec.method, spec.destination, spec.deliverHeaders);
  return {
    destination: spec.destination,
    method: spec.method,
    body: spec.body,
    ...sealed,
    retries: spec.retries ?? runDefaults?.retries ?? DEFAULT_RETRIES,
    retryDelay: spec.retryDelay ?? runDefaults?.retryDelay ?? null,
    timeoutMs: spec.timeoutMs ?? null,
    callback: storedFollowUp(context, spec.callback),
    failureCallback: storedFollowUp(context, spec.failureCallback),
    redact: spec.redact,
  };
}

function dedupKey(spec: MessageSpec): string | null {
  const key = stepKey(spec);
  if (key !== null) return key;
  if (spec.deduplicationId !== undefined) return `id:${spec.deduplicationId}`;
  if (!spec.contentBasedDeduplication) return null;
  const content = JSON.stringify([
    spec.destination,
    spec.method,
    spec.body,
    Object.entries(spec.deliverHeaders).sort(),
  ]);
  return `content:${createHash('sha256').update(content).digest('base64url')}`;
}

/** The message row of `spec` (not yet inserted). */
export function newMessage(
  context: EngineContext,
  spec: MessageSpec,
  now: number,
  runDefaults?: RunDefaults,
): NewMessage {
  const workflow = spec.workflow;
  const callType = workflow ? workflow.callType : null;
  return {
    id: newMessageId(),
    runId: workflow?.runId ?? null,
    callType,
    // A step goes to the workflow with the run's whole list; a call, callback or failure call with its own body.
    kind: callType === 'step' ? 'workflow' : 'plain',
    spec: storedSpec(context, spec, runDefaults),
    dueAt: dueAt(spec, now),
    dedupKey: dedupKey(spec),
    // A run's steps go under the run's flow control; a call under its own.
    flow: spec.flowControl ?? (callType === 'step' ? runDefaults?.flowControl : null) ?? null,
    now,
    ...(spec.kept && { delivered: true }),
  };
}

/**
 * The failure callback of a run whose first message named none: its workflow URL, with the headers
 * the SDK would have sent (`Client.trigger` names the workflow URL itself). QStash calls a failed
 * workflow's endpoint whatever its first message said; a route without `failureFunction` answers
 * `Upstash-Workflow-Failure-Callback-Notfound` and that is the end of it.
 */
function defaultFailureCallback(runId: string, url: string, forwarded: Record<string, string>): FollowUp {
  const headers: Record<string, string> = {
    [forwardedHeader(WorkflowHeader.IsFailure)]: 'true',
    [forwardedHeader(WorkflowHeader.FailureCallback)]: 'true',
    [WorkflowHeader.RunId]: runId,
    [WorkflowHeader.Init]: 'false',
    [WorkflowHeader.Url]: url,
    [WorkflowHeader.CallType]: 'failureCall',
  };
  for (const [name, value] of Object.entries(forwarded)) headers[forwardedHeader(name)] ??= value;
  return { url, headers };
}

/**
 * context.invoke: the first message's body wraps the child's payload and names the invoker
 * (invoke.ts), which must be an open QStash run: the child's start writes the invoker's step row.
 * Undefined for any other first message.
 */
async function readInvoke(context: EngineContext, spec: MessageSpec): Promise<ReturnType<typeof readInvokeRequest>> {
  if (spec.deliverHeaders[WorkflowHeader.Invoke] !== 'true') return undefined;
  const invoke = readInvokeRequest(context, spec.body);
  if (!invoke)
    throw badRequest(
      'BAD_INVOKE',
      'Expected the body of an invoke request (Upstash-Workflow-Invoke: true) to be {body, headers, workflowRunId, workflowUrl, step} naming the invoking run and its step.',
    );
  const invoker = await context.store.getRun(invoke.invoker.runId);
  if (invoker?.protocol !== 'upstash' || FINISHED_RUN_STATUSES.has(invoker.status))
    throw invokerRefused(invoke.invoker.runId, invoker);
  return invoke;
}

/**
 * Creates the run of a first message (`Upstash-Workflow-Init: true`); an existing run id is a
 * duplicate. An invoked run is created with its invoker's step row and, when the app published it
 * during the invoker's delivery (`fromApp`), that delivery settled: one transaction.
 */
async function startRun(
  context: EngineContext,
  spec: MessageSpec,
  { now, fromApp }: { now: number; fromApp: boolean },
): Promise<PublishResult> {
  const workflow = spec.workflow!;
  checkOrigin(context, spec.destination);
  const failureCallback = storedFollowUp(
    context,
    spec.failureCallback ?? defaultFailureCallback(workflow.runId, workflow.url ?? spec.destination, spec.forwarded),
  );
  const forwarded = sealHeaders(context.credentials, 'POST', spec.destination, spec.forwarded);
  const invoke = await readInvoke(context, spec);
  if (invoke) spec = { ...spec, body: invoke.payload };
  const config: RunConfig = {
    forwarded: forwarded.headers,
    ...(forwarded.sealed !== undefined && { sealed: forwarded.sealed }),
    retries: spec.retries ?? DEFAULT_RETRIES,
    retryDelay: spec.retryDelay ?? null,
    failureCallback,
    label: spec.label ?? null,
    flowControl: spec.flowControl ?? null,
    ...(invoke && { invoker: invoke.invoker }),
    ...(spec.restTrigger && { restTrigger: true }),
  };
  // The first message itself is a step of the list (the payload), delivered like the others.
  // Its run id is its deduplication: a deduplication id of its own is not needed (nor kept).
  const first = {
    ...newMessage(
      context,
      { ...spec, workflow: { ...workflow, callType: 'step' }, failureCallback: undefined },
      now,
      config,
    ),
    dedupKey: null,
  };
  const invoker = invoke?.invoker;
  const { created, applied } = await context.messages.createRun(
    {
      id: workflow.runId,
      url: workflow.url ?? spec.destination,
      body: spec.body,
      headers: context.credentials.redact(spec.forwarded),
      retries: config.retries,
      retryDelayMs: firstRetryDelayMs(config.retryDelay),
      idempotencyKey: invoke ? childIdempotencyKey(invoke.invoker.runId, invoke.invoker.step.stepId) : null,
      config: JSON.stringify(config),
      now,
    },
    first,
    invoker && {
      changes: invokeStepChanges(invoker, workflow.runId, now),
      ...(fromApp && {
        during: [
          { runId: invoker.runId, step: { stepId: invoker.step.stepId, concurrent: invoker.step.concurrent ?? 1 } },
        ],
      }),
      returning: context.events.size > 0,
      now,
    },
  );
  if (!created) {
    const existing = await context.store.getRun(workflow.runId);
    if (isSdkHandover(spec) && existing?.protocol === 'upstash' && !FINISHED_RUN_STATUSES.has(existing.status))
      return handOver(context, spec, now);
    // An invoke step run again (at least once) finds the child its first run started: a duplicate too.
    if (existing?.protocol !== 'upstash' && !(existing === undefined && invoke))
      throw runNotRunning(workflow.runId, existing?.status ?? 'not a QStash workflow run');
    return { messageId: workflow.runId, url: spec.destination, deduplicated: true };
  }
  const run = await context.store.getRun(workflow.runId);
  if (run) context.events.emit({ type: 'run', run });
  announce(context.events, applied);
  return { messageId: first.id, url: spec.destination };
}

/**
 * The SDK's re-published first message after an unknown-SDK delivery (handover.ts): one more
 * delivery of the run, which brings the SDK the run's list; a second one is a duplicate.
 */
async function handOver(context: EngineContext, spec: MessageSpec, now: number): Promise<PublishResult> {
  const runId = spec.workflow!.runId;
  const text = await context.messages.runConfig(runId);
  const defaults = text === undefined ? undefined : (JSON.parse(text) as RunConfig);
  const message: NewMessage = {
    ...newMessage(
      context,
      { ...spec, workflow: { ...spec.workflow!, init: false, callType: HANDOVER_CALL_TYPE } },
      now,
      defaults,
    ),
    kind: 'workflow',
    dedupKey: handoverKey(runId),
    flow: spec.flowControl ?? defaults?.flowControl ?? null,
  };
  const stored = await context.messages.publish([{ message, changes: [] }], {
    returning: context.events.size > 0,
    now,
  });
  announce(context.events, stored.applied);
  context.wake();
  const [result] = stored.results;
  return { messageId: result!.id, url: spec.destination, ...(result!.deduplicated && { deduplicated: true }) };
}

/** A call the workflow asked for (`context.call`): its row shows the request, redacted, until the answer comes. */
function callStepChanges(runId: string, spec: MessageSpec, stored: StoredSpec, now: number): Change[] {
  const headers = spec.callback?.headers ?? {};
  const index = Number(headers[forwardedHeader(WorkflowHeader.StepId)]);
  const name = headers[forwardedHeader(WorkflowHeader.StepName)];
  if (!Number.isInteger(index) || index <= 0 || name === undefined) return [];
  const request = { url: spec.destination, method: spec.method, headers: stored.headers, body: spec.body };
  return [
    {
      type: 'step-suspended',
      runId,
      index,
      name,
      kind: stepKind(headers[forwardedHeader(WorkflowHeader.StepType)] ?? 'Call'),
      group: null,
      until: null,
      eventId: null,
      request,
      at: now,
    },
  ];
}

/** A plan step's group: the first target of the plan steps of its run in the same batch (one `Promise.all`). */
function parallelGroup(specs: readonly MessageSpec[], runId: string, step: SdkStep): number | null {
  if (step.stepId !== 0 || (step.concurrent ?? 1) <= 1) return null;
  let first = step.targetStep ?? null;
  for (const other of specs) {
    if (other.workflow?.runId !== runId) continue;
    const plan = readSdkStep(other.body);
    if (plan?.stepId === 0 && plan.targetStep !== undefined && (first === null || plan.targetStep < first))
      first = plan.targetStep;
  }
  return first;
}

export interface PublishOptions {
  /**
   * The app published these while it handled a delivery (`/v2/publish`, `/v2/batch`), not the
   * engine: the delivery of each run they carry a step of is settled with them (../delivery/in-progress.ts).
   */
  fromApp?: boolean;
  /** The engine's wait end: held behind its run's delivery in progress, if any (../delivery/publish-hold.ts). */
  behindDelivery?: boolean;
}

/**
 * Stores every message of one publish or batch (in order), creating runs for first messages.
 * The rest are one transaction with their step rows and the deliveries they settle
 * (`MessageStore.publish`). A second message for a step of a run answers the first one's id,
 * `deduplicated` (the SDK carries on), and writes nothing.
 * Throws `ApiError` 400 for a run that is not running, `OriginNotAllowedError` for a destination
 * (or callback) outside the allowed origins; nothing of the batch after the refused one is stored.
 */
export async function publishMessages(
  context: EngineContext,
  specs: readonly MessageSpec[],
  options: PublishOptions = {},
): Promise<PublishResult[]> {
  const now = context.now();
  const results: (PublishResult | undefined)[] = [];
  const pending: { index: number; published: PublishedMessage; url: string }[] = [];
  const during = new Map<string, DeliveryRef>();
  const configs = new Map<string, RunConfig>();
  for (const [index, spec] of specs.entries()) {
    const workflow = spec.workflow;
    if (workflow?.init) {
      results[index] = await startRun(context, spec, { now, fromApp: options.fromApp ?? false });
      continue;
    }
    let defaults: RunConfig | undefined;
    let runUrl: string | undefined;
    if (workflow) {
      const run = await context.store.getRun(workflow.runId);
      if (run?.protocol !== 'upstash' || FINISHED_RUN_STATUSES.has(run.status)) {
        throw runNotRunning(
          workflow.runId,
          run === undefined
            ? undefined
            : run.protocol !== 'upstash'
              ? 'a native wfkit run, not a QStash workflow run'
              : run.status,
        );
      }
      runUrl = run.url;
      defaults = configs.get(workflow.runId);
      if (!defaults) {
        const text = await context.messages.runConfig(workflow.runId);
        defaults = text === undefined ? undefined : (JSON.parse(text) as RunConfig);
        if (defaults) configs.set(workflow.runId, defaults);
      }
    }
    // A call's target follows the call rule (an allowed origin, or a public address: refused here
    // when that can be told now, and by the egress gate at connect time in any case); a run's own
    // URL was allowed when the run started (the gate checks it again when it is sent); anything
    // else must be in the allowed origins.
    if (workflow?.callType === 'toCallback') await checkCallTarget(spec.destination, context.allowedOrigins);
    else if (spec.destination !== runUrl) checkOrigin(context, spec.destination);
    const message = newMessage(context, spec, now, defaults);
    const changes: Change[] = [];
    pending.push({ index, published: { message, changes }, url: spec.destination });
    const step = options.fromApp && workflow && !during.has(workflow.runId) ? publishedStep(spec) : undefined;
    if (step) during.set(workflow!.runId, { runId: workflow!.runId, step });
    if (workflow && message.kind === 'workflow') {
      const step = readSdkStep(spec.body);
      if (step) {
        const started = context.deliveryStartedAt(workflow.runId, step.stepId);
        const durationMs = started === undefined ? 0 : Math.max(0, now - started);
        changes.push(
          ...publishedStepChanges(
            workflow.runId,
            step,
            now,
            message.dueAt,
            parallelGroup(specs, workflow.runId, step),
            durationMs,
          ),
        );
      }
    }
    if (workflow?.callType === 'toCallback') changes.push(...callStepChanges(workflow.runId, spec, message.spec, now));
  }
  const stored = await context.messages.publish(
    pending.map((p) => p.published),
    {
      during: [...during.values()],
      ...(options.behindDelivery && { behind: [...new Set(specs.flatMap((spec) => spec.workflow?.runId ?? []))] }),
      returning: context.events.size > 0,
      now,
    },
  );
  pending.forEach((p, i) => {
    const result = stored.results[i]!;
    results[p.index] = { messageId: result.id, url: p.url, ...(result.deduplicated && { deduplicated: true }) };
  });
  announce(context.events, stored.applied);
  // A run started here is due now; what waits for its delivery's answer is woken for by that
  // answer (publish-hold.ts), not now.
  const fresh = results.filter((r) => r !== undefined && !r.deduplicated).length;
  if (fresh > stored.held) context.wake();
  return results as PublishResult[];
}
