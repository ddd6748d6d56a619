import { sendAlert, unsentAlert } from '../alerts/deliver.js';
import type { AlertConfig } from '../alerts/options.js';
import { settleAlert } from '../alerts/settle.js';
import { runAttempt, type AttemptContext } from '../drive/attempt.js';
import { isFull, SLOT_RECHECK_MS } from '../egress/slots.js';
import { failureRequest, settleFailureCall } from './settle-failure-call.js';
import type { Attempt, Change, Run, RunPatch, Store } from '../store/types.js';
import type { UnreachablePolicy } from '../drive/unreachable.js';
import { AttemptNumbers, type UpstashAttemptSeq } from './attempt-numbers.js';
import { alertDueAt, deliveriesDueAt, failureCallDueAt, owesAlert, owesNativeFailureCall } from './owed.js';
import { pauseUntil } from './pause.js';

/** What delivering a finished run's owed deliveries needs from the driver. */
export interface DeliveriesContext {
  store: Store;
  owner: string;
  now: () => number;
  unreachable: UnreachablePolicy;
  scheduler: { readonly stopped: boolean; isLost(runId: string): boolean };
  /** The driver's attempt context (its `commit` is the fenced one): a failureFunction call is a drive request. */
  attempt: AttemptContext;
  /** Undefined when this runner has no webhook: a pending alert is then given up, saying why. */
  alerts?: AlertConfig | undefined;
  upstashAttemptSeq?: UpstashAttemptSeq | undefined;
}

/** The run as this drive holds it (updated by each delivery's commit), and how many attempts it made before it failed. */
interface Held {
  run: Run;
  failedAfter: number;
}

/** One delivery's try: its entry in the run's log (none when nothing was sent) and its own fields. */
interface Delivered {
  attempt?: Attempt;
  patch: RunPatch;
}

/** One kind of owed delivery: whether it is owed, when next, and one try of it. */
interface Lane {
  owed(run: Run): boolean;
  /** Settles the delivery without a try (and without taking an attempt number) when it is not to be sent at all. */
  unsent?(run: Run): RunPatch | undefined;
  dueAt(run: Run): number | null;
  deliver(ctx: DeliveriesContext, held: Held, seq: number, signal: AbortSignal): Promise<Delivered>;
}

const alertLane: Lane = {
  owed: owesAlert,
  dueAt: alertDueAt,
  // A cancel that landed while the failing drive settled keeps the run cancelled: nothing to alert.
  unsent: (run) => (run.status !== 'failed' ? { alert: null, alertAttempts: 0, alertNextAt: null } : undefined),
  async deliver(ctx, { run, failedAfter }, seq, signal) {
    const { now, unreachable, alerts } = ctx;
    // Numbered `seq`, but the document says how many attempts the run made before it failed, the
    // same in every try (alertDocument subtracts the alert's own tries).
    const alertAttempts = run.alertAttempts ?? 0;
    const shown = { ...run, attempts: failedAfter + alertAttempts };
    if (!alerts)
      return {
        attempt: { ...unsentAlert(shown, now()), seq },
        patch: { alertAttempts: alertAttempts + 1, alert: 'failed', alertNextAt: null },
      };
    const delivery = await sendAlert(
      { egress: ctx.attempt.egress, now, config: alerts, redact: (h) => ctx.attempt.credentials.redact(h) },
      shown,
      await ctx.store.listSteps(run.id),
      signal,
    );
    return {
      attempt: { ...delivery.attempt, seq },
      patch: settleAlert(run, delivery, now(), Math.random, unreachable),
    };
  },
};

const failureCallLane: Lane = {
  owed: owesNativeFailureCall,
  dueAt: failureCallDueAt,
  async deliver(ctx, { run }, seq, signal) {
    const slot = ctx.attempt.egress.acquire(new URL(run.url), 'failure-call', run.id);
    // The app's origin has this runner's share in flight (`egress.perAppOrigin`): tried again shortly, spending nothing.
    if (isFull(slot)) return { patch: { failureCallNextAt: ctx.now() + SLOT_RECHECK_MS } };
    const numbered = { ...run, attempts: seq - 1 };
    try {
      const result = await runAttempt(ctx.attempt, {
        slot,
        run: numbered,
        committed: [],
        signal,
        failure: failureRequest(run, await ctx.store.listSteps(run.id)),
      });
      return {
        attempt: result.attempt,
        patch: settleFailureCall(numbered, result, { now: ctx.now(), unreachable: ctx.unreachable }),
      };
    } finally {
      slot.release();
    }
  },
};

/**
 * Delivers what a finished run owes (its alert, its native failureFunction call), the two at once
 * and independently: each on its own schedule, with its own attempts, neither waiting for the other
 * (a webhook that hangs or refuses does not hold the failureFunction back, nor a slow failureFunction
 * the alert). While one is sending, the other tries again when its own next try comes; once none is
 * sending and none is due, the run's `nextAt` becomes the earlier of their next tries and the lease
 * goes back (a drive never holds a scheduler slot just to wait). Each
 * try is an attempt in the run's log, committed with its delivery's fields (fenced by the lease).
 * True when the lease was released with the last commit (or lost).
 */
export async function deliverOwed(ctx: DeliveriesContext, initial: Run, signal: AbortSignal): Promise<boolean> {
  const { store, now, owner } = ctx;
  // Read back once (failed runs are rare): the state as stored, which a cancel may have kept.
  const run = (await store.getRun(initial.id)) ?? initial;
  const shared: Held = { run, failedAfter: run.attempts - (run.alertAttempts ?? 0) - run.failureCallAttempts };
  const numbers = new AttemptNumbers(shared.run, now, ctx.upstashAttemptSeq);
  const cut: Attempt[] = [];
  const lanes = [alertLane, failureCallLane].filter((lane) => lane.owed(shared.run));
  const board = new Board();
  const results = await Promise.allSettled(
    lanes.map((lane) => runLane(ctx, lane, { shared, numbers, cut, board, signal })),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const runId = shared.run.id;
  if (signal.aborted) {
    if (ctx.scheduler.isLost(runId)) return true;
    // Cut short (the runner is stopping): keep their logs; the numbers they took stay taken.
    const logged: Change[] = cut.map((attempt) => ({ type: 'attempt', attempt: { ...attempt, outcome: 'aborted' } }));
    await ctx.attempt.commit([...logged, { type: 'run', runId, patch: numbers.counted({}), at: now() }]);
    return false;
  }
  await ctx.attempt.commit([
    { type: 'run', runId, patch: { nextAt: deliveriesDueAt(shared.run) }, at: now() },
    { type: 'release', runId, owner },
  ]);
  return true;
}

/**
 * How many deliveries of the run are sending now, and a promise settled at the next change: a
 * delivery that is not due waits only while another one is sending (then the drive holds the run
 * anyway); once none is, the drive ends and the scheduler brings the run back when one is due.
 */
class Board {
  busy = 0;

  private wake: (() => void) | undefined;

  private next: Promise<void> | undefined;

  /** Settles when a delivery stops sending. */
  changed(): Promise<void> {
    this.next ??= new Promise<void>((resolve) => (this.wake = resolve));
    return this.next;
  }

  done(): void {
    this.busy -= 1;
    this.wake?.();
    this.next = undefined;
    this.wake = undefined;
  }
}

/** What the lanes of one drive share: the run as held, its attempt numbers, the attempts cut short, who is sending. */
interface Lanes {
  shared: Held;
  numbers: AttemptNumbers;
  /** Attempts an abort cut short, logged as `aborted` when the drive ends. */
  cut: Attempt[];
  board: Board;
  signal: AbortSignal;
}

/** One delivery's tries while this drive holds the run: due ones now, later ones while the other delivery still works. */
async function runLane(
  ctx: DeliveriesContext,
  lane: Lane,
  { shared, numbers, cut, board, signal }: Lanes,
): Promise<void> {
  for (let tried = false; !signal.aborted && !(tried && ctx.scheduler.stopped); ) {
    if (!lane.owed(shared.run)) return;
    const due = lane.dueAt(shared.run) ?? ctx.now();
    if (due > ctx.now()) {
      // Waiting here only while the other delivery is sending; else the scheduler brings the run back.
      if (board.busy === 0 || ctx.scheduler.stopped) return;
      await pauseUntil(due, ctx.now, signal, board.changed());
      continue;
    }
    board.busy += 1;
    try {
      const unsent = lane.unsent?.(shared.run);
      const delivered = unsent
        ? { patch: unsent }
        : await lane.deliver(ctx, shared, await numbers.take(shared.run.id), signal);
      tried = true;
      if (signal.aborted) {
        if (delivered.attempt) cut.push(delivered.attempt);
        return;
      }
      const at = ctx.now();
      const patch = numbers.counted(delivered.patch);
      await ctx.attempt.commit([
        ...(delivered.attempt ? [{ type: 'attempt' as const, attempt: delivered.attempt }] : []),
        { type: 'run', runId: shared.run.id, patch, at },
      ]);
      shared.run = { ...shared.run, ...patch, updatedAt: at };
    } finally {
      board.done();
    }
  }
}
