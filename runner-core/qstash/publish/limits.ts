import { ApiError } from '../../errors.js';
import { UpstashHeader } from '../headers.js';
import type { MessageSpec } from '../messages/spec.js';

/**
 * The plan limits QStash holds a publish to, and how it refuses one: a well-formed value above the
 * plan's limit (`Upstash-Retries: 1000000`) is 412 Precondition Failed, not 400. The SDK reads the
 * two differently: a 400 means "the run finished, stop quietly" (a child run would then wait
 * forever), a 412 fails the step at once as a `WorkflowNonRetryableError`, so the run fails and
 * its failure function runs. A malformed value stays a 400 (../messages/spec.ts).
 */

export interface UpstashLimits {
  /** The most `Upstash-Retries` a message may ask for (QStash's plans allow from 3 to a few dozen). */
  maxRetries: number;
  /**
   * The largest body of a request to the QStash API (a message, a batch, a run's result, a notify)
   * and of a call's answer; larger is 413 (a call's answer is cut there). QStash allows 1 MB on its
   * free plan and 10 MB from pay-as-you-go up: an app moving a few MiB between steps works.
   */
  maxMessageBytes: number;
}

/**
 * QStash's paid plans' limits; `RunnerOptions.upstashLimits` (`--upstash-max-retries`,
 * `--upstash-max-message-size`) changes them.
 */
export const DEFAULT_UPSTASH_LIMITS: UpstashLimits = { maxRetries: 100, maxMessageBytes: 10 * 1024 * 1024 };

/** The limits with `overrides` applied, checked (a negative or fractional limit is the caller's mistake). */
export function upstashLimits(overrides: Partial<UpstashLimits> = {}): UpstashLimits {
  const limits = { ...DEFAULT_UPSTASH_LIMITS, ...overrides };
  if (!Number.isSafeInteger(limits.maxRetries) || limits.maxRetries < 0) {
    throw new RangeError(
      `Expected upstashLimits.maxRetries to be a whole number of at least 0, got ${limits.maxRetries}.`,
    );
  }
  if (!Number.isSafeInteger(limits.maxMessageBytes) || limits.maxMessageBytes < 1024) {
    throw new RangeError(
      `Expected upstashLimits.maxMessageBytes to be a whole number of bytes, at least 1024, got ${limits.maxMessageBytes}.`,
    );
  }
  return limits;
}

/** QStash's answer to a publish over a plan limit. */
export class PlanLimitError extends ApiError {
  constructor(message: string) {
    super(412, 'PLAN_LIMIT_EXCEEDED', message);
  }
}

/**
 * Refuses the whole publish or batch (nothing of it stored) when one of its messages, or the
 * callback or failure callback one names, asks for more than `limits` allow.
 */
export function checkPlanLimits(limits: UpstashLimits, specs: readonly MessageSpec[]): void {
  for (const [index, spec] of specs.entries()) {
    const asked = [
      spec.retries,
      ...[spec.callback, spec.failureCallback].map((followUp) =>
        followUp ? Number(followUp.headers[UpstashHeader.Retries] ?? 0) : 0,
      ),
    ];
    const retries = Math.max(...asked.map((n) => n ?? 0));
    if (retries > limits.maxRetries) {
      const where = specs.length > 1 ? `batch message ${index}` : 'publish';
      throw new PlanLimitError(
        `${where}: Upstash-Retries ${retries} is over this runner's limit of ${limits.maxRetries} retries (--upstash-max-retries).`,
      );
    }
  }
}
