import { DeterminismError, NonRetryableError, RetryAfterError, WorkflowError, serializeError } from '../../protocol/errors.js';
import type { StepRecord } from '../../protocol/messages.js';
import type { Outcome } from '../../protocol/outcome.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';

/** A promise that never settles: how a halted workflow is parked without throwing into user code. */
const parked = <T>(): Promise<T> => new Promise<T>(() => {});

export interface SessionOptions {
  committed: readonly StepRecord[];
  emit: (outcome: Outcome) => void;
  /** Called once, right after the terminal line, which waits for every in-flight step. */
  close: () => void;
  timeBudgetMs: number;
  now?: () => number;
}

/**
 * One drive request's replay-and-continue state. Committed steps are answered from their
 * records; new steps run back to back, each streamed as it finishes, until the workflow returns,
 * a step throws, a determinism check fails, or the time budget is spent.
 *
 * Halting never throws into user code: later `run` calls return a promise that never settles and
 * the request ends, so a `try/catch` around `context.run` cannot swallow the stop.
 */
export class DriveSession {
  private cursor = 0;
  private halted = false;
  private terminal: Outcome | undefined;
  private newSteps = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly started: number;
  private readonly now: () => number;

  private readonly options: SessionOptions;

  constructor(options: SessionOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
  }

  run<T>(name: string, fn: () => T | Promise<T>): Promise<Awaited<T>> {
    if (this.halted) return parked();
    if (typeof name !== 'string' || name === '') {
      this.halt({ t: 'failed', retryable: false, error: serializeError(new WorkflowError('WORKFLOW', `Expected a step name (non-empty string), got ${String(name)}.`)) });
      return parked();
    }
    const index = this.cursor++;
    const record = this.options.committed[index];
    if (record) {
      if (record.name !== name || record.kind !== 'run') {
        this.fail(new DeterminismError(
          `Step ${index} is recorded as ${record.kind} "${record.name}" but the workflow now asks for run "${name}" there. ` +
            'Steps must be called in the same order on every replay; start a new run after changing the order.',
        ));
        return parked();
      }
      return Promise.resolve(decodeValue(record.output) as Awaited<T>);
    }
    if (this.newSteps > 0 && this.now() - this.started > this.options.timeBudgetMs) {
      this.halt({ t: 'continue' });
      return parked();
    }
    this.newSteps++;
    const execution = this.execute(index, name, fn);
    this.inflight.add(execution);
    void execution.then(() => {
      this.inflight.delete(execution);
      if (this.halted && this.inflight.size === 0) this.end();
    });
    return execution.then((result) => (result.ok ? result.value : parked()));
  }

  /** Runs one new step; settles once it is finished and streamed (never rejects). */
  private async execute<T>(index: number, name: string, fn: () => T | Promise<T>): Promise<{ ok: true; value: Awaited<T> } | { ok: false }> {
    this.options.emit({ t: 'started', index, name, kind: 'run' });
    const t0 = this.now();
    let value: Awaited<T>;
    let output: string | undefined;
    try {
      value = await fn();
      output = encodeValue(value, `step "${name}"`);
    } catch (error) {
      const durationMs = this.now() - t0;
      const failed: Outcome = {
        t: 'failed',
        error: serializeError(error),
        retryable: !(error instanceof NonRetryableError || (WorkflowError.is(error) && (error.code === 'NON_RETRYABLE' || error.code === 'SERIALIZATION'))),
        step: { index, name, kind: 'run', durationMs },
      };
      if (error instanceof RetryAfterError || (WorkflowError.is(error) && error.code === 'RETRY_AFTER')) {
        failed.retryAfterMs = (error as RetryAfterError).retryAfterMs;
      }
      this.halt(failed);
      return { ok: false };
    }
    // Streamed even after a halt: a finished result saves a re-execution on the next attempt.
    const line: Outcome = { t: 'step', index, name, kind: 'run', durationMs: this.now() - t0 };
    if (output !== undefined) line.output = output;
    this.options.emit(line);
    return this.halted ? { ok: false } : { ok: true, value };
  }

  /** The workflow function returned. */
  finish(value: unknown): void {
    if (this.halted) return;
    const recorded = this.options.committed.length;
    if (this.cursor < recorded) {
      const next = this.options.committed[this.cursor]!;
      this.fail(new DeterminismError(
        `The workflow returned after ${this.cursor} steps, but ${recorded} are recorded (next: ${next.kind} "${next.name}"). Steps must be called in the same order on every replay.`,
      ));
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
    const retryable = !(
      error instanceof NonRetryableError ||
      (WorkflowError.is(error) && ['NON_RETRYABLE', 'DETERMINISM', 'SERIALIZATION', 'CONFIG'].includes(error.code))
    );
    const outcome: Outcome = { t: 'failed', error: serializeError(error), retryable };
    if (WorkflowError.is(error) && error.code === 'RETRY_AFTER') outcome.retryAfterMs = (error as RetryAfterError).retryAfterMs;
    this.halt(outcome);
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
