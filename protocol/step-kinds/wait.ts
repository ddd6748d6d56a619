import { expectNumber, expectString } from '../validate.js';
import type { ParseSuspension } from './types.js';

/** `context.waitForEvent`: resolved by a `notify` of `eventId`, or as timed out at `until` (epoch ms). */
export interface WaitSuspension {
  eventId: string;
  until: number;
}

export const parseWait: ParseSuspension<WaitSuspension> = (o, where) => ({
  eventId: expectString(o, 'eventId', where),
  until: expectNumber(o, 'until', where),
});
