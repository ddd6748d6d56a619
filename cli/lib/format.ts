import type { RunnerEvent } from '../../runner-core/events.js';
import type { Attempt, Run, RunStatus, Step, StepStatus } from '../../runner-core/store/types.js';

const GLYPH: Record<RunStatus | StepStatus, string> = {
  queued: '○',
  running: '▶',
  sleeping: '◔',
  waiting: '◌',
  completed: '✓',
  succeeded: '✓',
  retrying: '↻',
  failed: '✗',
  cancelled: '⊘',
};

export function glyph(status: RunStatus | StepStatus): string {
  return GLYPH[status] ?? '?';
}

export function time(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

export function duration(ms: number | null): string {
  if (ms === null) return '';
  // Thresholds on the rounded value, so 9.96 is "10ms" (not "10.0ms") and 999.6 is "1.00s" (not "1000ms").
  if (ms < 9.95) return `${ms.toFixed(1)}ms`;
  if (ms < 999.5) return `${Math.round(ms)}ms`;
  return `${(ms / 1000).toFixed(2)}s`;
}

function runLine(run: Run): string {
  const took = run.finishedAt ? ` in ${duration(run.finishedAt - run.createdAt)}` : '';
  const steps = `${run.stepsDone} step${run.stepsDone === 1 ? '' : 's'}`;
  const detail =
    run.status === 'queued'
      ? run.url
      : run.status === 'failed'
        ? `${steps}${took}: ${run.error?.message ?? 'failed'}`
        : run.status === 'running' && run.failures > 0
          ? `retry ${run.failures}/${run.retries} at ${time(run.nextAt ?? run.updatedAt)}`
          : `${steps}${took}`;
  return `run ${run.status} · ${detail}`;
}

function stepLine(step: Step): string {
  const took = step.durationMs === null ? '' : ` (${duration(step.durationMs)})`;
  const again = step.executions > 1 ? ` · executed ${step.executions}×` : '';
  const error = step.error && step.status !== 'succeeded' ? `: ${step.error.message}` : '';
  return `step ${step.index} ${step.name} ${step.status}${took}${again}${error}`;
}

function attemptLine(attempt: Attempt): string {
  const status = attempt.responseStatus === null ? 'no response' : `HTTP ${attempt.responseStatus}`;
  return `attempt ${attempt.seq} · ${status} · ${attempt.outcome} (${duration(attempt.durationMs)})${attempt.error ? `: ${attempt.error.message}` : ''}`;
}

/** One plain line per runner event: what `wf dev --no-tui` and `wf logs` print. */
export function eventLine(event: RunnerEvent): string {
  switch (event.type) {
    case 'run':
      return `${time(event.run.updatedAt)} ${event.run.id} ${glyph(event.run.status)} ${runLine(event.run)}`;
    case 'step':
      return `${time(event.step.finishedAt ?? event.step.startedAt)} ${event.step.runId} ${glyph(event.step.status)}   ${stepLine(event.step)}`;
    case 'attempt':
      // Stamped when it ended: the line comes after the steps it streamed.
      return `${time(event.attempt.startedAt + event.attempt.durationMs)} ${event.attempt.runId} ·   ${attemptLine(event.attempt)}`;
  }
}

/** The whole story of one run, oldest first, in the same line format. */
export function runStory(run: Run, steps: Step[], attempts: Attempt[]): string[] {
  const events: { at: number; line: string }[] = [
    ...steps.map((step) => ({ at: step.startedAt, line: eventLine({ type: 'step', step }) })),
    ...attempts.map((attempt) => ({ at: attempt.startedAt + attempt.durationMs, line: eventLine({ type: 'attempt', attempt }) })),
  ];
  events.sort((a, b) => a.at - b.at);
  return [
    `${time(run.createdAt)} ${run.id} ○ run queued · POST ${run.url}`,
    ...events.map((e) => e.line),
    eventLine({ type: 'run', run }),
  ];
}
