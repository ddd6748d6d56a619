const brand = Symbol.for('wfkit.error');

export type WorkflowErrorCode =
  | 'WORKFLOW'
  | 'NON_RETRYABLE'
  | 'RETRY_AFTER'
  | 'PROTOCOL'
  | 'DETERMINISM'
  | 'CONFIG'
  | 'SIGNATURE'
  /** A signed request arrived after its deadline: the runner gave up on it and retries on its own. */
  | 'LATE'
  | 'RUNNER'
  | 'SERIALIZATION'
  | 'STEP_FAILED'
  | 'TIMEOUT'
  | 'NESTED_STEP'
  /** A start's Host is not in the route's `allowedHosts` / WF_ALLOWED_HOSTS (the app's optional lock): 403. */
  | 'HOST_NOT_ALLOWED';

/**
 * Base class of every error wfkit throws on purpose. `WorkflowError.is(x)` works across
 * several copies of the package (a bundled route and the runner), where `instanceof` does not.
 */
export class WorkflowError extends Error {
  override name = 'WorkflowError';
  readonly code: WorkflowErrorCode;
  constructor(code: WorkflowErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
  get [brand](): true {
    return true;
  }
  static is(value: unknown): value is WorkflowError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

/** Throw from a step to fail the run at once, without retries. */
export class NonRetryableError extends WorkflowError {
  override name = 'NonRetryableError';
  constructor(message: string, options?: ErrorOptions) {
    super('NON_RETRYABLE', message, options);
  }
}

/** Throw from a step to have it retried after a given delay (milliseconds, or a `Date`). */
export class RetryAfterError extends WorkflowError {
  override name = 'RetryAfterError';
  readonly retryAfterMs: number;
  constructor(message: string, retryAfter: number | Date, options?: ErrorOptions) {
    super('RETRY_AFTER', message, options);
    const ms = retryAfter instanceof Date ? retryAfter.getTime() - Date.now() : retryAfter;
    if (!Number.isFinite(ms)) {
      throw new TypeError(
        `Expected \`retryAfter\` to be a number of milliseconds or a Date, got ${String(retryAfter)}.`,
      );
    }
    this.retryAfterMs = Math.max(0, Math.round(ms));
  }
}

/** A message on the wire did not have the expected shape; answered with 400. */
export class ProtocolError extends WorkflowError {
  override name = 'ProtocolError';
  constructor(message: string, options?: ErrorOptions) {
    super('PROTOCOL', message, options);
  }
}

/** The replayed workflow asked for a different step than the one recorded at that position. */
export class DeterminismError extends WorkflowError {
  override name = 'DeterminismError';
  constructor(message: string) {
    super('DETERMINISM', message);
  }
}

/**
 * On replay, a step that failed for good (its retries spent) rethrows its error into the workflow
 * as this, with the original name, message and stack, so a `try/catch` can handle it and go on.
 */
export class StepFailedError extends WorkflowError {
  readonly step: string;
  constructor(step: string, original: SerializedError) {
    super('STEP_FAILED', original.message);
    this.name = original.name;
    if (original.stack) this.stack = original.stack;
    this.step = step;
  }
}

/** Codes that no retry can fix: the run (or the step) fails at once. */
export const FINAL_ERROR_CODES: ReadonlySet<string> = new Set([
  'NON_RETRYABLE',
  'DETERMINISM',
  'SERIALIZATION',
  'CONFIG',
  'STEP_FAILED',
  'NESTED_STEP',
]);

/** Whether another attempt might succeed where this error failed. */
export function isRetryable(error: unknown): boolean {
  return !(error instanceof NonRetryableError || (WorkflowError.is(error) && FINAL_ERROR_CODES.has(error.code)));
}

/** An error as it travels on the wire and is stored. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

/** Turns anything thrown into a plain `SerializedError`; non-Error values are wrapped, never lost. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const out: SerializedError = { name: error.name, message: error.message };
    if (error.stack) out.stack = error.stack;
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') out.code = code;
    return out;
  }
  let text: string;
  try {
    text = typeof error === 'string' ? JSON.stringify(error) : (JSON.stringify(error) ?? String(error));
  } catch {
    text = String(error);
  }
  return { name: 'Error', message: `Non-error was thrown: ${text}` };
}
