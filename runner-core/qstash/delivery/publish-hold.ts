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
 * out (`MessageStore.releaseHeld`). In the same write it leases to itself what it has room for
 * (`MessageStore.takeHeld`: due now, no flow-control key, within its byte budget) and sends it at once,
 * so a sequential run's next step leaves without a claim; the rest goes to whoever claims it. A runner
 * that died mid-delivery renews nothing: its holds end with the lease it would have renewed, and the
 * messages are delivered then, as its own would be again.
 *
 * The engine's own message to a run that ends a wait (a notify, a kept event found by the wait
 * itself, a timeout: `QStashEngine.appendRunStep`) is published during no delivery, but the run may
 * have one in progress (the one whose `waitForEvent` registered the wait, or any later one): it is
 * held the same way behind that delivery (`PublishOptions.behind`: the run's leased delivery to the
 * app, its latest), without settling it. The worker lets go of the holds once more after it settled
 * a delivery, so a wait's end published between the answer and the settle is not left to the lease.
 */

export const HOLD_PREFIX = 'hold:';

/** The lease owner of the messages published during delivery `deliveryId`. */
export function holdOwner(deliveryId: string): string {
  return `${HOLD_PREFIX}${deliveryId}`;
}
