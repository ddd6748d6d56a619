/** Input of `Store.deliverEvent`. */
export interface DeliverEventInput {
  eventId: string;
  data: string;
  output: string;
  now: number;
  keepUntil: number;
}

/**
 * The advisory lock `wfkit_deliver_event` and `wfkit_take_event` (functions.ts) take for
 * one event id, per schema, so a notify and a wait registered at the same moment see each other.
 */
export function eventLockKey(schema: string, eventId: string): string {
  return `wfkit.event.${schema}.${eventId}`;
}
