import { decodeValue } from '../../../protocol/values.js';
import { FINISHED_RUN_STATUSES, type Run, type Step } from '../../store/types.js';

/**
 * `Client.logs` answers (`GET /v2/workflows/events?groupBy=workflowRunId`): a wfkit run and its
 * step rows as QStash's `WorkflowRunLog`. Step rows are the one record of an Upstash-protocol run
 * here (what the dashboards show), so the log is read from them; a step's `stepType` is the one
 * its message carried (`Notify`, `SleepUntil`, `WaitForWebhook`…), else its kind's. Message ids are
 * the engine's (the message that carried the payload or the step) when it gave them, else the run
 * id and the step's position. An invoke step whose run ended before its child did shows the
 * child's outcome, as QStash's log does, not the end of the run around it.
 */

export type WorkflowState = 'RUN_STARTED' | 'RUN_SUCCESS' | 'RUN_FAILED' | 'RUN_CANCELED';
export const WORKFLOW_STATES: readonly WorkflowState[] = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'];

/** What a run's config adds to its log, when the engine knows it. */
export interface RunLogExtras {
  label?: string | null;
  retryDelay?: string | null;
  /** The message that carried each position (0: the payload), from the run's message list. */
  messageIds?: ReadonlyMap<number, string>;
  /** The SDK's `stepType` of each position's message (`Notify`, `SleepUntil`…). */
  stepTypes?: ReadonlyMap<number, string>;
  /** The child run of each invoke step that never got its result (the invoker ended first). */
  children?: ReadonlyMap<number, Run>;
}

export function workflowState(run: Pick<Run, 'status'>): WorkflowState {
  switch (run.status) {
    case 'completed':
      return 'RUN_SUCCESS';
    case 'failed':
      return 'RUN_FAILED';
    case 'cancelled':
      return 'RUN_CANCELED';
    default:
      return 'RUN_STARTED';
  }
}

const STEP_TYPES: Record<string, string> = {
  run: 'Run',
  sleep: 'SleepFor',
  call: 'Call',
  wait: 'Wait',
  invoke: 'Invoke',
};
const STEP_STATES: Record<string, string> = {
  succeeded: 'STEP_SUCCESS',
  failed: 'STEP_FAILED',
  retrying: 'STEP_RETRY',
  cancelled: 'STEP_CANCELED',
};

/** Header values as QStash lists them: every value in a list. */
const headerLists = (headers: Record<string, string>): Record<string, string[]> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));

/**
 * An invoke step's state and result from its child: finished, the `{body, isFailed, isCanceled}`
 * the invoker would have got (a failed or cancelled child gives no body); running, in progress.
 */
function childOutcome(child: Run): { state: string; out?: unknown } {
  if (!FINISHED_RUN_STATUSES.has(child.status)) return { state: 'STEP_PROGRESS' };
  const completed = child.status === 'completed' && child.output !== null;
  const body = completed ? JSON.stringify(decodeValue(child.output!) ?? null) : undefined;
  const out = { body, isFailed: child.status === 'failed', isCanceled: child.status === 'cancelled' };
  return { state: 'STEP_SUCCESS', out };
}

function stepLog(run: Run, step: Step, extras: RunLogExtras): Record<string, unknown> {
  const child = step.status === 'succeeded' ? undefined : extras.children?.get(step.index);
  const outcome = child ? childOutcome(child) : undefined;
  const log: Record<string, unknown> = {
    stepId: step.index,
    stepName: step.name,
    stepType: extras.stepTypes?.get(step.index) ?? STEP_TYPES[step.kind] ?? 'Run',
    callType: 'step',
    messageId: extras.messageIds?.get(step.index) ?? `${run.id}:${step.index}`,
    out: outcome ? outcome.out : step.output === null ? undefined : decodeValue(step.output),
    retries: run.retries,
    concurrent: 1,
    state: outcome?.state ?? STEP_STATES[step.status] ?? 'STEP_PROGRESS',
    createdAt: step.startedAt,
    headers: {},
  };
  if (extras.retryDelay) log.retryDelay = extras.retryDelay;
  if (step.kind === 'wait' && step.until !== null) {
    log.waitTimeoutDeadline = step.until;
    const output = step.output === null ? undefined : (decodeValue(step.output) as { timeout?: boolean } | undefined);
    if (output) log.waitTimeout = output.timeout === true;
  }
  if (step.kind === 'sleep' && step.until !== null) log.sleepUntil = Math.floor(step.until / 1000);
  return log;
}

/** The initial payload as the first, `Initial` step (QStash shows it as the step `init`). */
function initialStep(run: Run, extras: RunLogExtras): Record<string, unknown> {
  return {
    stepId: 0,
    stepName: 'init',
    stepType: 'Initial',
    callType: 'step',
    messageId: extras.messageIds?.get(0) ?? `${run.id}:0`,
    out: run.body,
    retries: run.retries,
    concurrent: 1,
    state: 'STEP_SUCCESS',
    createdAt: run.createdAt,
    headers: headerLists(run.headers),
    ...(extras.retryDelay ? { retryDelay: extras.retryDelay } : {}),
  };
}

/** Consecutive steps of one `Promise.all` (one group) become one `parallel` entry; any other step is `sequential`. */
function groupSteps(run: Run, steps: readonly Step[], extras: RunLogExtras): Record<string, unknown>[] {
  const groups: Record<string, unknown>[] = [{ type: 'sequential', steps: [initialStep(run, extras)] }];
  let current: { group: number; steps: Record<string, unknown>[] } | undefined;
  for (const step of [...steps].sort((a, b) => a.index - b.index)) {
    const log = stepLog(run, step, extras);
    if (step.group === null) {
      current = undefined;
      groups.push({ type: 'sequential', steps: [log] });
      continue;
    }
    if (current?.group !== step.group) {
      current = { group: step.group, steps: [] };
      groups.push({ type: 'parallel', steps: current.steps });
    }
    current.steps.push(log);
  }
  for (const group of groups)
    if (group.type === 'parallel')
      for (const log of group.steps as Record<string, unknown>[]) log.concurrent = (group.steps as unknown[]).length;
  return groups;
}

/** The run as a `WorkflowRunLog`. */
export function workflowRunLog(run: Run, steps: readonly Step[], extras: RunLogExtras = {}): Record<string, unknown> {
  const log: Record<string, unknown> = {
    workflowRunId: run.id,
    workflowUrl: run.url,
    workflowState: workflowState(run),
    workflowRunCreatedAt: run.createdAt,
    steps: groupSteps(run, steps, extras),
  };
  if (run.finishedAt !== null) log.workflowRunCompletedAt = run.finishedAt;
  if (run.status === 'completed' && run.output !== null)
    log.workflowRunResponse = JSON.stringify(decodeValue(run.output) ?? null);
  if (extras.label) {
    log.label = extras.label;
    log.labels = [extras.label];
  }
  return log;
}
