/**
 * What the two lease-holding loops (the scheduler's drives, the QStash engine's deliveries) share
 * about their work in flight: how often leases are renewed, and how a stop drains.
 */

/** How often leases of `leaseMs` are renewed: three times per lease, at most every 250 ms. */
export function renewEvery(leaseMs: number): number {
  return Math.max(250, Math.floor(leaseMs / 3));
}

/** Gives the work in flight `graceMs` to finish, then aborts what is left and waits for it to end. */
export async function drainInFlight(inFlight: { readonly size: number }, graceMs: number, abortAll: () => void): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  abortAll();
  while (inFlight.size > 0) await new Promise((r) => setTimeout(r, 10));
}
