import { toMilliseconds } from '../../protocol/duration.js';
import {
  DeterminismError,
  RetryAfterError,
  StepFailedError,
  WorkflowError,
  isRetryable,
  serializeError,
} from '../../protocol/errors.js';
import type { StepKind, StepRecord } from '../../protocol/messages.js';
import type { Outcome, Suspension } from '../../protocol/outcome.js';
import type { SuspendingStepKind, SuspensionFields } from '../../protocol/step-kinds/index.js';
import { stepTraceContext, type TraceContext } from '../../protocol/trace-context.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { isLogLevel, type LogLevel } from '../../protocol/step-logs.js';
import type { StepInfo, StepOptions } from './step-kinds/run.js';
import { withTimeout } from './steps.js';
import { currentStepLogs, followsAwaits, printOriginal, runWithStepLogs, StepLogBuffer } from './step-logs.js';

/** A promise that never settles: how a halted workflow is parked without throwing into user code. */
const parked = <T>(): Promise<T> => new Promise<T>(() => {});

export interface SessionOptions {
  committed: readonly StepRecord[];
  emit: (outcome: Outcome) => void;
  /** Called once, right after the terminal line, which waits for every in-flight step. */
  close: () => void;
  timeBudgetMs: number;
  now?: () => number;
  /** Wall clock for sleeps, timeouts and the deadline (epoch ms). @default Date.now */
  clock?: () => number;
  /**
   * Epoch ms (on `clock`) from the signed request: after it the runner no longer waits for this
   * response or may have handed the run to another runner, so no new step starts (`continue`).
   */
  deadline?: number;
  /** The drive's trace context (its `traceparent`): each step's `fn` gets its own span under it. */
  trace?: TraceContext | undefined;
}

interface Slot {
  index: number;
  group: number;
  /** The finished step recorded here, to answer from; undefined for a new or still pending one. */
  record: StepRecord | undefined;
  /** The runner has a row for this position (finished or pending). */
  known: boolean;
}

/**
 * One drive request's replay-and-continue state. Committed steps are answered from their
 * records; new `run` steps execute back to back, each streamed as it finishes; sleeps, waits and
 * calls are collected and handed to the runner (`suspend`) once no step is running.
 *
 * Halting never throws into user code: later calls return a promise that never settles and the
 * request ends, so a `try/catch` around `context.run` cannot swallow the stop.
 */
export class DriveSession {
  private cursor = 0;
  private halted = false;
  private terminal: Outcome | undefined;
  private newSteps = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly pending: Suspension[] = [];
  private suspendCheckQueued = false;
  private group = 0;
  private groupOpen = false;
  /** The step whose `fn` is running synchronously right now: a step called then is nested. */
  private executing: string | undefined;
  /** The log buffers of this request's steps in flight: `context.log` without AsyncLocalStorage picks the only one. */
  private readonly logBuffers = new Set<StepLogBuffer>();
  private readonly started: number;
  private readonly now: () => number;
  private readonly clockFn: () => number;
  private readonly options: SessionOptions;

  constructor(options: SessionOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
    this.clockFn = options.clock ?? Date.now;
    this.started = this.now();
  }

  run<T>(name: string, fn: (step: StepInfo) => T | Promise<T>, options: StepOptions = {}): Promise<Awaited<T>> {
    const slot = this.claim('run', name);
    if (!slot) return parked();
    if (slot.record) return this.replay(slot.record);
    const budgetSpent = this.newSteps > 0 && this.now() - this.started > this.options.timeBudgetMs;
    const deadline = this.options.deadline;
    if (budgetSpent || (deadline !== undefined && this.clockFn() > deadline)) {
      this.halt({ t: 'continue' });
      return parked();
    }
    let timeoutMs: number | undefined;
    let retryDelayMs: number | undefined;
    try {
      if (options.timeout !== undefined) timeoutMs = toMilliseconds(options.timeout, `\`timeout\` of step "${name}"`);
      if (options.retryDelay !== undefined)
        retryDelayMs = toMilliseconds(options.retryDelay, `\`retryDelay\` of step "${name}"`, 'milliseconds');
    } catch (error) {
      this.fail(error);
      return parked();
    }
    this.newSteps++;
    const execution = this.execute(slot, name, fn, { timeoutMs, retryDelayMs, retries: options.retries });
    this.inflight.add(execution);
    void execution.then(() => {
      this.inflight.delete(execution);
      if (this.halted) {
        if (this.inflight.size === 0) this.end();
      } else if (this.pending.length > 0) this.queueSuspendCheck();
    });
    return execution.then((result) => (result.ok ? result.value : parked()));
  }

  /** The wall clock (epoch ms) sleeps and timeouts count from. */
  clock(): number {
    return this.clockFn();
  }

  /**
   * `context.log`: printed through the console as it was (so the app's own logs still show it), and
   * kept with the step it is called in. Outside any step it is only printed. Never throws.
   */
  log(level: LogLevel, message: unknown, fields?: Record<string, unknown>): void {
    const lvl: LogLevel = isLogLevel(level) ? level : 'log';
    const text = typeof message === 'string' ? message : String(message);
    const extra = typeof fields === 'object' && fields !== null && !Array.isArray(fields) ? fields : undefined;
    printOriginal(lvl, text, extra);
    // Without AsyncLocalStorage a line after an `await` cannot name its step: the only step in flight
    // is the one (with several, or with AsyncLocalStorage saying "outside any step", none is).
    const buffer =
      currentStepLogs() ??
      (!followsAwaits() && this.logBuffers.size === 1 ? this.logBuffers.values().next().value : undefined);
    try {
      buffer?.add(lvl, text, extra);
    } catch {} // logging must never fail the step
  }

  cancel(): Promise<never> {
    if (this.executing !== undefined)
      this.fail(
        new WorkflowError(
          'NESTED_STEP',
          `context.cancel() was called inside step "${this.executing}": call it from the workflow function.`,
        ),
      );
    else this.halt({ t: 'cancel' });
    return parked();
  }

  /** The workflow function returned. */
  finish(value: unknown): void {
    if (this.halted) return;
    const recorded = this.options.committed.length;
    if (this.cursor < recorded) {
      const next = this.options.committed[this.cursor]!;
      this.fail(
        new DeterminismError(
          `The workflow returned after ${this.cursor} steps, but ${recorded} are recorded (next: ${next.kind} "${next.name}"). Steps must be called in the same order on every replay.`,
        ),
      );
      return;
    }
    let output: string | undefined;
    try {
      output = encodeValue(value, 'the workflow');
    } catch (error) {
      this.fail(error);
      return;
    }
    this.halt(output === undefined ? { t: 'done' } : { t: 'done', output });
  }

  /** The workflow threw outside any step, or a check failed. */
  fail(error: unknown): void {
    const outcome: Outcome = { t: 'failed', error: serializeError(error), retryable: isRetryable(error) };
    if (error instanceof RetryAfterError || (WorkflowError.is(error) && error.code === 'RETRY_AFTER'))
      outcome.retryAfterMs = (error as RetryAfterError).retryAfterMs;
    this.halt(outcome);
  }

  /** Takes the next position for a step, after the checks every kind shares. */
  private claim(kind: StepKind, name: string): Slot | undefined {
    if (this.halted) return undefined;
    if (this.executing !== undefined) {
      this.fail(
        new WorkflowError(
          'NESTED_STEP',
          `Step "${String(name)}" was started inside step "${this.executing}": steps cannot be nested. Call it from the workflow function, after "${this.executing}" returns.`,
        ),
      );
      return undefined;
    }
    if (typeof name !== 'string' || name === '') {
      this.fail(new WorkflowError('CONFIG', `Expected a step name (non-empty string), got ${JSON.stringify(name)}.`));
      return undefined;
    }
    const index = this.cursor++;
    const record = this.options.committed[index];
    if (record && (record.name !== name || record.kind !== kind)) {
      this.fail(
        new DeterminismError(
          `Step ${index} is recorded as ${record.kind} "${record.name}" but the workflow now asks for ${kind} "${name}" there. ` +
            'Steps must be called in the same order on every replay; start a new run after changing the order.',
        ),
      );
      return undefined;
    }
    // A pending record only holds the position (later ones have results): run or suspend it anew.
    return {
      index,
      group: this.nextGroup(),
      record: record?.pending ? undefined : record,
      known: record !== undefined,
    };
  }

  /** Steps started without an `await` between them (Promise.all) share a group. */
  private nextGroup(): number {
    if (!this.groupOpen) {
      this.group++;
      this.groupOpen = true;
      queueMicrotask(() => (this.groupOpen = false));
    }
    return this.group;
  }

  private replay<T>(record: StepRecord): Promise<T> {
    if (record.error) return Promise.reject(new StepFailedError(record.name, record.error));
    try {
      return Promise.resolve(decodeValue(record.output) as T);
    } catch (error) {
      this.fail(error);
      return parked();
    }
  }

  /**
   * A step the runner resolves (sleep, wait, call, invoke…): answered from the record, or described
   * by its kind's route module (serve/core/step-kinds/) and handed to the runner.
   */
  suspend<K extends SuspendingStepKind>(kind: K, name: string, describe: () => SuspensionFields[K]): Promise<unknown> {
    const slot = this.claim(kind, name);
    if (!slot) return parked();
    if (slot.record) return this.replay(slot.record);
    let suspension: Suspension;
    try {
      // The kind's own fields after the base ones; its module typed them against the kind.
      const fields: object = describe();
      suspension = { kind, index: slot.index, name, group: slot.group, ...fields } as Suspension;
    } catch (error) {
      this.fail(error);
      return parked();
    }
    // Recorded at once (not only with the `suspend` line): if a parallel step fails and ends the
    // response first, the position still exists, so the steps after it replay instead of running again.
    if (!slot.known) this.options.emit({ t: 'started', index: slot.index, name, kind, group: slot.group });
    this.pending.push(suspension);
    this.queueSuspendCheck();
    return parked();
  }

  /**
   * Suspends once the workflow cannot go on: no step running, and a macrotask later, so steps
   * started in the same breath (Promise.all) are collected first.
   */
  private queueSuspendCheck(): void {
    if (this.suspendCheckQueued) return;
    this.suspendCheckQueued = true;
    setTimeout(() => {
      this.suspendCheckQueued = false;
      if (!this.halted && this.inflight.size === 0 && this.pending.length > 0)
        this.halt({ t: 'suspend', steps: [...this.pending] });
    }, 0);
  }

  /** Runs one new step; settles once it is finished and streamed (never rejects). */
  private async execute<T>(
    slot: Slot,
    name: string,
    fn: (step: StepInfo) => T | Promise<T>,
    policy: { timeoutMs?: number; retryDelayMs?: number; retries?: number },
  ): Promise<{ ok: true; value: Awaited<T> } | { ok: false }> {
    const { index, group } = slot;
    this.options.emit({ t: 'started', index, name, kind: 'run', group });
    const t0 = this.now();
    const logs = new StepLogBuffer(this.clockFn);
    this.logBuffers.add(logs);
    let value: Awaited<T>;
    let output: string | undefined;
    try {
      let result: T | Promise<T>;
      this.executing = name;
      try {
        result = runWithStepLogs(logs, () => fn(this.stepInfo(index, name)));
      } finally {
        this.executing = undefined;
      }
      value = (await withTimeout(result, policy.timeoutMs, name)) as Awaited<T>;
      output = encodeValue(value, `step "${name}"`);
    } catch (error) {
      this.logBuffers.delete(logs);
      const step: Extract<Outcome, { t: 'failed' }>['step'] = { index, name, kind: 'run', durationMs: this.now() - t0 };
      const lines = logs.seal();
      if (lines) step.logs = lines;
      if (policy.retries !== undefined) step.retries = policy.retries;
      if (policy.retryDelayMs !== undefined) step.retryDelayMs = policy.retryDelayMs;
      const failed: Outcome = { t: 'failed', error: serializeError(error), retryable: isRetryable(error), step };
      if (error instanceof RetryAfterError || (WorkflowError.is(error) && error.code === 'RETRY_AFTER'))
        failed.retryAfterMs = (error as RetryAfterError).retryAfterMs;
      this.halt(failed);
      return { ok: false };
    }
    this.logBuffers.delete(logs);
    // Streamed even after a halt: a finished result saves a re-execution on the next attempt.
    const line: Extract<Outcome, { t: 'step' }> = { t: 'step', index, name, kind: 'run', durationMs: this.now() - t0 };
    if (output !== undefined) line.output = output;
    const lines = logs.seal();
    if (lines) line.logs = lines;
    this.options.emit(line);
    return this.halted ? { ok: false } : { ok: true, value };
  }

  /** What a step's `fn` is told about itself; its trace context is the span the runner gives the step. */
  private stepInfo(index: number, name: string): StepInfo {
    const drive = this.options.trace;
    return { index, name, trace: drive && stepTraceContext(drive, index) };
  }

  /** Stops the workflow; the terminal line goes out once no step is in flight, so it is always last. */
  private halt(terminal: Outcome): void {
    if (this.halted) return;
    this.halted = true;
    this.terminal = terminal;
    if (this.inflight.size === 0) this.end();
  }

  private end(): void {
    if (!this.terminal) return;
    this.options.emit(this.terminal);
    this.terminal = undefined;
    this.options.close();
  }
}
