import type { SerializedError } from '../../protocol/errors.js';
import type { StepKind } from '../../protocol/messages.js';
import type { Run, Step } from '../store/types.js';

/** The JSON body of a failure alert: one per failed run, the same for every delivery of that failure. */
export interface AlertDocument {
  type: 'run.failed';
  /** `<runId>.<failedAt ms>`: the same on every delivery of one failure, so a receiver can drop repeats. */
  id: string;
  runId: string;
  /** The workflow's route. */
  url: string;
  status: 'failed';
  error: { name: string; message: string; code?: string };
  /** The step that failed for good, when one did (a run can also fail outside any step). */
  failedStep: { index: number; name: string; kind: StepKind } | null;
  /** ISO 8601. */
  createdAt: string;
  failedAt: string;
  /** Drive requests the run took until it failed. */
  attempts: number;
  /** The run's page in the web dashboard; null when the runner was not told where that is. */
  dashboardUrl: string | null;
  /** One readable line (and the link): what a Slack incoming webhook shows, and a fine summary elsewhere. */
  text: string;
}

/** Bounds what a step's error may put into an alert (a stack or a message can be megabytes). */
const MESSAGE_LIMIT = 2_000;
const TEXT_MESSAGE_LIMIT = 500;

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`;
}

/**
 * The alert about a failed run (pure): its error and the step that failed for good, if any.
 * The stack stays out: it is in the dashboard, and it names the app's files to whoever reads the channel.
 * @example alertDocument(run, steps, 'https://wf.example.com').text // 'wfkit run 01J… failed at step "charge" (#1): Error: card declined\nhttps://wf.example.com/runs/01J…'
 */
export function alertDocument(run: Run, steps: readonly Step[], publicUrl: string | undefined): AlertDocument {
  const raw: SerializedError = run.error ?? { name: 'Error', message: 'The run failed.' };
  const error: AlertDocument['error'] = { name: raw.name, message: clip(raw.message, MESSAGE_LIMIT) };
  if (raw.code !== undefined) error.code = raw.code;
  const step = steps.findLast((s) => s.status === 'failed');
  const failedStep = step ? { index: step.index, name: step.name, kind: step.kind } : null;
  const failedAt = run.finishedAt ?? run.updatedAt;
  const dashboardUrl = publicUrl === undefined ? null : `${publicUrl}/runs/${encodeURIComponent(run.id)}`;
  const where = failedStep ? ` at step "${failedStep.name}" (#${failedStep.index})` : '';
  const text =
    `wfkit run ${run.id} failed${where}: ${error.name}: ${clip(raw.message, TEXT_MESSAGE_LIMIT)}` +
    (dashboardUrl ? `\n${dashboardUrl}` : `\n${run.url}`);
  return {
    type: 'run.failed',
    id: `${run.id}.${failedAt}`,
    runId: run.id,
    url: run.url,
    status: 'failed',
    error,
    failedStep,
    createdAt: new Date(run.createdAt).toISOString(),
    failedAt: new Date(failedAt).toISOString(),
    // As when the run failed: the alert's own deliveries (which come first) do not change the document.
    attempts: run.attempts - (run.alertAttempts ?? 0),
    dashboardUrl,
    text,
  };
}
