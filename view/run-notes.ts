import type { Run } from '../api/dto.js';

/** The fields the notes read: a stored run and an API run both have them. */
type NotedRun = Pick<
  Run,
  | 'finishedAt'
  | 'failureCall'
  | 'nextAt'
  | 'unreachableSince'
  | 'failureCallAttempts'
  | 'status'
  | 'alert'
  | 'alertAttempts'
> & { queuedReason?: string };

/** One fact about a run's delivery worth a line of its own in a dashboard or `wf logs`. */
export interface RunNote {
  kind: 'unreachable' | 'failure-call' | 'flow-control' | 'alert';
  /** warn: waiting on the app; ok: done; error: given up. */
  tone: 'warn' | 'ok' | 'error';
  text: string;
}

const attempts = (n: number): string => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * What the TUI, the web dashboard and `wf logs` say about a run's outage, its failure alert and its
 * failureFunction call, from the run's own fields (no extra read): the one place these sentences are made. Each
 * view passes its own clock format.
 * @example runNotes(run, (ms) => new Date(ms).toISOString()) // [{ kind: 'unreachable', tone: 'warn', text: 'app unreachable since …, next try at …' }]
 */
export function runNotes(run: NotedRun, time: (ms: number) => string): RunNote[] {
  const notes: RunNote[] = [];
  const waiting = run.finishedAt === null || run.failureCall === 'pending' || run.alert === 'pending';
  const next = run.nextAt === null ? '' : `, next try at ${time(run.nextAt)}`;
  if (run.queuedReason && run.finishedAt === null)
    notes.push({ kind: 'flow-control', tone: 'warn', text: `waiting: ${run.queuedReason}` });
  if (run.unreachableSince !== null && waiting) {
    notes.push({
      kind: 'unreachable',
      tone: 'warn',
      text: `app unreachable since ${time(run.unreachableSince)}${next}`,
    });
  }
  // The alert goes first: while it is pending, the run's next try is the alert's.
  const alertAttempts = run.alertAttempts ?? 0;
  switch (run.alert) {
    case 'pending':
      notes.push({
        kind: 'alert',
        tone: 'warn',
        text: `alert pending (${alertAttempts === 0 ? 'not sent yet' : attempts(alertAttempts)}${next})`,
      });
      break;
    case 'delivered':
      notes.push({ kind: 'alert', tone: 'ok', text: `alert delivered (${attempts(alertAttempts)})` });
      break;
    case 'failed':
      notes.push({
        kind: 'alert',
        tone: 'error',
        text: `alert not delivered: gave up after ${attempts(alertAttempts)}`,
      });
      break;
  }
  switch (run.failureCall) {
    case 'pending': {
      const tried = run.failureCallAttempts === 0 ? 'not sent yet' : attempts(run.failureCallAttempts);
      const when = run.alert === 'pending' ? ', after the alert' : run.unreachableSince === null ? next : '';
      notes.push({ kind: 'failure-call', tone: 'warn', text: `failureFunction pending (${tried}${when})` });
      break;
    }
    case 'delivered':
      notes.push({
        kind: 'failure-call',
        tone: 'ok',
        text: `failureFunction delivered (${attempts(run.failureCallAttempts)})`,
      });
      break;
    case 'failed':
      notes.push({
        kind: 'failure-call',
        tone: 'error',
        text: `failureFunction not delivered: gave up after ${attempts(run.failureCallAttempts)}`,
      });
      break;
  }
  return notes;
}
