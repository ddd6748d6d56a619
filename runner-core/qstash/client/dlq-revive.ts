import { createHash } from 'node:crypto';
import type { FlowControl } from '../../../protocol/flow-control.js';
import { ApiError } from '../../errors.js';
import { FINISHED_RUN_STATUSES, type Run } from '../../store/types.js';
import { openHeaders, type EngineContext, type RunConfig, type StoredFollowUp } from '../context.js';
import type { QStashEngine } from '../engine.js';
import { WorkflowHeader } from '../headers.js';
import type { FollowUp, MessageSpec } from '../messages/spec.js';
import type { DeadLetter, StoredMessage } from '../messages/store.js';
import { HANDOVER_CALL_TYPE } from '../publish/handover.js';
import { checkPlanLimits } from '../publish/limits.js';

/**
 * `client.dlq.resume` and `client.dlq.restart`: a run that failed for good becomes a new run (a new
 * id, as QStash gives one), published like any other through the engine's publish (publish.ts), so
 * its deliveries, holds and end are every run's.
 *
 * - **restart**: the new run is the old one's first message again (payload, forwarded headers,
 *   label, failure callback): every step runs anew.
 * - **resume**: the new run's list is the old one's, in order, each entry with the new run id. What
 *   the old run had delivered is kept (`MessageSpec.kept`: stored delivered, never sent again; its
 *   step shows succeeded); the rest (the message it failed on, and any never delivered) is sent, so
 *   the app replays the kept steps and goes on from the one that failed.
 *
 * Both take QStash's overrides (`Upstash-Retries`, `Upstash-Flow-Control-Key/-Value`); otherwise the
 * old run's settings. The old run's dead letters are deleted once the new run is stored: a letter
 * revives once. The new run's id (unless `Upstash-Workflow-RunId` names one) is derived from the
 * letter and the mode, so the same request sent twice (a retried call, two callers at once) starts
 * one run, not two, and one cut short by a runner that died is completed by sending it again (the
 * letter stays in the DLQ until the new run is whole).
 */

export type ReviveMode = 'resume' | 'restart';

export interface ReviveOverrides {
  retries?: number | undefined;
  flowControl?: FlowControl | undefined;
  /** `Upstash-Workflow-RunId`: the new run's id, for one letter (QStash's REST resume of one id). */
  runId?: string | undefined;
}

/** What the SDK reads back for each revived run. */
export interface RevivedRun {
  workflowRunId: string;
  workflowCreatedAt: number;
}

/** A dead letter that cannot revive: its run is not one that failed (a call's letter while its run goes on). */
export function notRevivable(letter: DeadLetter, run: Run | undefined): ApiError {
  return new ApiError(
    409,
    'RUN_NOT_FAILED',
    `DLQ message ${letter.id} belongs to run ${letter.runId}, which is ${run?.status ?? 'gone'}: only a failed run is resumed or restarted.`,
  );
}

/** The new run's id: one per letter and mode. */
export function revivedRunId(letterId: string, mode: ReviveMode): string {
  return `wfr_${mode}-${createHash('sha256').update(`${mode}:${letterId}`).digest('base64url').slice(0, 24)}`;
}

const withRunId = (headers: Record<string, string>, runId: string): Record<string, string> =>
  headers[WorkflowHeader.RunId] === undefined ? headers : { ...headers, [WorkflowHeader.RunId]: runId };

function openFollowUp(context: EngineContext, followUp: StoredFollowUp | null, runId: string): FollowUp | undefined {
  if (!followUp) return undefined;
  const headers = openHeaders(context.credentials, 'POST', followUp.url, followUp.headers, followUp.sealed);
  return { url: followUp.url, headers: withRunId(headers, runId) };
}

/** The old run's message `message` as a publish of the new run `runId` (its first when `first`). */
function revivedSpec(
  context: EngineContext,
  old: { run: Run; config: RunConfig },
  message: StoredMessage,
  runId: string,
  overrides: ReviveOverrides,
  { first, kept }: { first: boolean; kept: boolean },
): MessageSpec {
  const { spec } = message;
  const { run, config } = old;
  const deliverHeaders = withRunId(
    openHeaders(context.credentials, spec.method, spec.destination, spec.headers, spec.sealed),
    runId,
  );
  // The payload was unwrapped when the old run started: the new one is nobody's invoked child.
  delete deliverHeaders[WorkflowHeader.Invoke];
  return {
    destination: spec.destination,
    method: spec.method,
    body: spec.body,
    deliverHeaders,
    forwarded: first ? openHeaders(context.credentials, 'POST', run.url, config.forwarded, config.sealed) : {},
    delayMs: 0,
    notBefore: undefined,
    retries: overrides.retries ?? (first ? config.retries : spec.retries),
    retryDelay: (first ? config.retryDelay : spec.retryDelay) ?? undefined,
    timeoutMs: spec.timeoutMs ?? undefined,
    callback: openFollowUp(context, spec.callback, runId),
    failureCallback: openFollowUp(context, first ? config.failureCallback : spec.failureCallback, runId),
    workflow: { runId, init: first, url: run.url, callType: first ? 'step' : (message.callType ?? 'step') },
    label: first ? (config.label ?? undefined) : undefined,
    flowControl: overrides.flowControl ?? (first ? (config.flowControl ?? undefined) : undefined),
    // Each entry once in the new run, whatever its own key (a call's answer has none): a revive sent again completes the list.
    deduplicationId: first ? undefined : `revive:${runId}:${message.id}`,
    contentBasedDeduplication: false,
    redact: spec.redact,
    ...(first && config.restTrigger && { restTrigger: true }),
    ...(kept && { kept: true }),
  };
}

/** The entries of a run's list a revive carries over: not its handover, not its failure callback. */
const listEntry = (message: StoredMessage): boolean =>
  message.callType !== HANDOVER_CALL_TYPE && message.callType !== 'failureCall';

/**
 * Starts the new run of `letter` (its run must have failed), then takes the run's letters out of
 * the DLQ. Throws `notRevivable` for a letter whose run did not fail.
 */
export async function reviveRun(
  engine: QStashEngine,
  letter: DeadLetter,
  mode: ReviveMode,
  overrides: ReviveOverrides,
): Promise<RevivedRun> {
  const { context } = engine;
  const { store, messages } = context;
  const oldId = letter.runId!;
  const run = await store.getRun(oldId);
  const configText = await messages.runConfig(oldId);
  if (run?.status !== 'failed' || configText === undefined) throw notRevivable(letter, run);
  const old = { run, config: JSON.parse(configText) as RunConfig };
  const list = (await messages.storedMessages(oldId)).filter(listEntry);
  const entries = mode === 'restart' ? list.slice(0, 1) : list;
  const runId = overrides.runId ?? revivedRunId(letter.id, mode);
  const specs = entries.map((message, index) =>
    revivedSpec(context, old, message, runId, overrides, {
      first: index === 0,
      kept: mode === 'resume' && message.status === 'delivered',
    }),
  );
  checkPlanLimits(engine.limits, specs);
  // The run first, alone. A run id given twice is refused; the derived one found again is this
  // letter's revive sent again (or cut short by a runner that died): its list is completed, each
  // entry once, unless the run finished meanwhile.
  const [started] = await context.publish(specs.slice(0, 1));
  if (started?.deduplicated && overrides.runId !== undefined)
    throw new ApiError(409, 'WORKFLOW_RUN_EXISTS', `Workflow run ${runId} exists already: name a new run id, or none.`);
  const revived = await store.getRun(runId);
  if (specs.length > 1 && revived && !FINISHED_RUN_STATUSES.has(revived.status)) await context.publish(specs.slice(1));
  const letters = await messages.deadLetters({ runId: oldId, limit: 1_000 });
  await messages.deleteDeadLetters(letters.map((dead) => dead.id));
  return { workflowRunId: runId, workflowCreatedAt: revived?.createdAt ?? context.now() };
}
