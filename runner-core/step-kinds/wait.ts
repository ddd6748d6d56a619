import type { Resolution, RunnerStepKind } from './types.js';
import { noDto, noneMeanwhile, succeeded } from './resolved.js';

/**
 * An event wait: resolved with a kept event (a `notify` that came before or while it waited), or
 * as timed out once its `until` passed; the run waits until then, or a notify wakes it.
 */
export const waitKind: RunnerStepKind<'wait'> = {
  stored: (s) => ({ until: s.until, eventId: s.eventId, request: null }),
  described: (step) => step.until !== null,
  resolve: async (ctx, _run, steps) => {
    const now = ctx.now();
    const out: Resolution[] = [];
    for (const step of steps) {
      if (step.until! <= now) out.push(succeeded(step, { eventData: undefined, timeout: true }, now));
      else {
        const kept = step.eventId === null ? undefined : await ctx.store.takeEvent(step.eventId, now);
        if (kept !== undefined)
          out.push(succeeded(step, { eventData: (JSON.parse(kept) as { data?: unknown }).data, timeout: false }, now));
        else out.push({ t: 'pending', wakeAt: step.until, status: 'waiting' });
      }
    }
    return out;
  },
  endedMeanwhile: noneMeanwhile,
  dto: noDto,
};
