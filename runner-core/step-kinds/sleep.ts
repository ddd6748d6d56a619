import type { RunnerStepKind } from './types.js';
import { noDto, noneMeanwhile, succeeded } from './resolved.js';

/** A sleep: resolved (with no value) once its `until` passed; the run sleeps until then. */
export const sleepKind: RunnerStepKind<'sleep'> = {
  stored: (s) => ({ until: s.until, eventId: null, request: null }),
  described: (step) => step.until !== null,
  resolve: async (ctx, _run, steps) => {
    const now = ctx.now();
    return steps.map((step) =>
      step.until! <= now ? succeeded(step, undefined, now) : { t: 'pending', wakeAt: step.until, status: 'sleeping' },
    );
  },
  endedMeanwhile: noneMeanwhile,
  dto: noDto,
};
