import { toMilliseconds, type Duration } from '../../../protocol/duration.js';
import { WorkflowError } from '../../../protocol/errors.js';
import type { SuspendTools } from './types.js';

/** Event waits give up after a week unless told otherwise (Upstash's default too). */
export const DEFAULT_WAIT_TIMEOUT: Duration = '7d';

export interface WaitForEventResult<Data = unknown> {
  eventData: Data | undefined;
  /** True when the timeout passed before any `notify`. */
  timeout: boolean;
}

export interface WaitMethods {
  /**
   * Waits until `notify(eventId, data)` (client, API or `wf notify`), or the timeout (default 7 days).
   * An event notified shortly before the wait is registered is kept and delivered (see README).
   */
  waitForEvent<Data = unknown>(
    name: string,
    eventId: string,
    options?: { timeout?: Duration },
  ): Promise<WaitForEventResult<Data>>;
}

export const waitMethods = (tools: SuspendTools): WaitMethods => ({
  waitForEvent: (name, eventId, options = {}) =>
    tools.suspend('wait', name, () => {
      if (typeof eventId !== 'string' || eventId === '')
        throw new WorkflowError(
          'CONFIG',
          `Expected the event id of waitForEvent "${name}" to be a non-empty string, got ${JSON.stringify(eventId)}.`,
        );
      const timeoutMs = toMilliseconds(
        options.timeout ?? DEFAULT_WAIT_TIMEOUT,
        `\`timeout\` of waitForEvent "${name}"`,
      );
      return { eventId, until: tools.clock() + timeoutMs };
    }) as never,
});
