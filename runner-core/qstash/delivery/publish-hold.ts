/**
 * What a delivery published is held until that delivery's answer has come (issue 21, item 12).
 *
 * The SDK publishes the next step (a result, a call, a plan) before it answers the delivery it
 * runs, and its host may still be working after that (middleware logging "step finished" once the
 * handler returned). QStash delivers what was published only after the answer: so must the runner,
 * or the next step reaches the app while the previous request is still in progress.
 *
 * The hold is a lease no runner holds: the publish that settles a delivery (in-progress.ts)
 * gives the run's fresh messages the lease owner `hold:<delivery id>` and the delivery's lease end
 * (only when that delivery is leased: someone is sending it and will hear its answer). Claims skip
 * leased messages, whoever their owner. The runner sending the delivery renews the holds with the
 * delivery's own lease and drops them as soon as the answer is read, or the request failed or timed
 * out (`MessageStore.releaseHeld`). A runner that died mid-delivery renews nothing: its holds end with
 * the lease it would have renewed, and the messages are delivered then, as its own would be again.
 */

const HOLD_PREFIX = 'hold:';

/** The lease owner of the messages published during delivery `deliveryId`. */
export function holdOwner(deliveryId: string): string {
  return `${HOLD_PREFIX}${deliveryId}`;
}
