import type { Duration } from '../../../protocol/duration.js';
import type { TraceContext } from '../../../protocol/trace-context.js';

/** Per-step options of `context.run`. */
export interface StepOptions {
  /** Retries of this step, overriding the workflow's. */
  retries?: number;
  /** Backoff base of this step's retries: milliseconds, or a string like "2s". */
  retryDelay?: Duration;
  /** Fail the attempt when `fn` takes longer: seconds, or a string like "30s". */
  timeout?: Duration;
}

/** What a step's `fn` receives: where it stands, and its span when the runner exports traces. */
export interface StepInfo {
  readonly index: number;
  readonly name: string;
  /**
   * The trace context of this step's span (the runner exports the span with this id), else
   * undefined: the parent for the app's own spans inside the step.
   */
  readonly trace: TraceContext | undefined;
}

export interface RunMethods {
  /**
   * A durable step: `fn` runs once, its result is stored by the runner, and on every later
   * replay `run` answers from that result without calling `fn`. `name` must be stable.
   * @example const user = await context.run("load-user", () => db.users.get(id));
   */
  run<T>(name: string, fn: (step: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<Awaited<T>>;
}

/** `run` is the kind the route executes itself: the session runs `fn` and streams its result. */
export const runMethods = (tools: { execute: RunMethods['run'] }): RunMethods => ({ run: tools.execute });
