import { fillAttempt, fillRun, fillStep, type StreamEvent } from '../../api/events.js';
import type { Attempt, Run, Step } from '../../api/dto.js';
import { formatDuration } from '../../view/duration.js';
import { runNotes } from '../../view/run-notes.js';
import { glyph } from '../../view/status.js';
import { runParent } from '../../view/links.js';
import { stepKindView } from '../../view/step-kinds/index.js';
import { terminalSafe } from '../../view/terminal-text.js';

export function time(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

function runLine(run: Run): string {
  const took = run.finishedAt ? ` in ${formatDuration(run.finishedAt - run.createdAt)}` : '';
  const steps = `${run.stepsDone} step${run.stepsDone === 1 ? '' : 's'}`;
  const detail =
    run.status === 'queued'
      ? run.url
      : run.status === 'failed'
        ? `${steps}${took}: ${run.error?.message ?? 'failed'}`
        : run.status === 'running' && run.failures > 0
          ? `retry ${run.failures}/${run.retries} at ${time(run.nextAt ?? run.updatedAt)}`
          : (run.status === 'sleeping' || run.status === 'waiting') && run.nextAt !== null
            ? `${steps} · wakes ${time(run.nextAt)}`
            : `${steps}${took}`;
  // An outage or a failureFunction call goes first: a long error message must not hide it.
  const notes = runNotes(run, time)
    .map((note) => `${note.text} · `)
    .join('');
  const parent = runParent(run);
  const link = parent ? `child of ${parent.parentRunId} step ${parent.parentStepIndex} · ` : '';
  return `run ${run.status} · ${link}${notes}${detail}`;
}

/** What a sleep, wait, call or invoke step is about, as its kind shows it (view/step-kinds/). */
function kindDetail(step: Step): string {
  return stepKindView(step.kind).line(step, time);
}

function stepLine(step: Step, parallel = false): string {
  const kind = step.kind === 'run' ? '' : `${step.kind} `;
  const took = step.durationMs === null ? '' : ` (${formatDuration(step.durationMs)})`;
  const again = step.reportedExecutions > 1 ? ` · executed ${step.reportedExecutions}×` : '';
  const error = step.error && step.status !== 'succeeded' ? `: ${step.error.message}` : '';
  const group = parallel && step.group !== null ? ` · parallel group ${step.group}` : '';
  return `step ${step.index} ${kind}${step.name} ${step.status}${took}${kindDetail(step)}${group}${again}${error}`;
}

function attemptLine(attempt: Attempt): string {
  const status = attempt.responseStatus === null ? 'no response' : `HTTP ${attempt.responseStatus}`;
  return `attempt ${attempt.seq} · ${status} · ${attempt.outcome} (${formatDuration(attempt.durationMs)})${attempt.error ? `: ${attempt.error.message}` : ''}`;
}

/**
 * One plain line per runner event: what `wf dev --no-tui` and `wf logs` print. A slim event
 * (see api/events.ts) prints without what its bodies would add (a call's answer status). Names,
 * URLs and errors come from workflow code: shown with their control characters escaped.
 */
export function eventLine(event: StreamEvent): string {
  return terminalSafe(rawEventLine(event));
}

function rawEventLine(event: StreamEvent): string {
  switch (event.type) {
    case 'run':
      return `${time(event.run.updatedAt)} ${event.run.id} ${glyph(event.run.status)} ${runLine(fillRun(undefined, event.run))}`;
    case 'step':
      return `${time(event.step.finishedAt ?? event.step.startedAt)} ${event.step.runId} ${glyph(event.step.status)}   ${stepLine(fillStep(undefined, event.step))}`;
    case 'attempt':
      // Stamped when it ended: the line comes after the steps it streamed.
      return `${time(event.attempt.startedAt + event.attempt.durationMs)} ${event.attempt.runId} ·   ${attemptLine(fillAttempt(undefined, event.attempt))}`;
  }
}

/** The whole story of one run, oldest first, in the same line format. */
export function runStory(run: Run, steps: Step[], attempts: Attempt[]): string[] {
  const groupSizes = new Map<number, number>();
  for (const step of steps) if (step.group !== null) groupSizes.set(step.group, (groupSizes.get(step.group) ?? 0) + 1);
  const stepEntry = (step: Step): string =>
    `${time(step.finishedAt ?? step.startedAt)} ${step.runId} ${glyph(step.status)}   ${stepLine(step, (groupSizes.get(step.group ?? -1) ?? 0) > 1)}`;
  const events: { at: number; line: string }[] = [
    ...steps.map((step) => ({ at: step.startedAt, line: stepEntry(step) })),
    ...attempts.map((attempt) => ({
      at: attempt.startedAt + attempt.durationMs,
      line: eventLine({ type: 'attempt', attempt }),
    })),
  ];
  events.sort((a, b) => a.at - b.at);
  return [
    `${time(run.createdAt)} ${run.id} ○ run queued · POST ${run.url}`,
    ...events.map((e) => e.line),
    eventLine({ type: 'run', run }),
  ].map(terminalSafe);
}
