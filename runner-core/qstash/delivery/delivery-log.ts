import { announce } from '../../commit/announce.js';
import type { Change } from '../../store/types.js';
import type { EngineContext } from '../context.js';

/** What the dashboards show of a run between its steps: no step result, no run end hides in it. */
const LOGGED_RUN_FIELDS = new Set(['unreachableSince', 'failures']);

/** True when `changes` are only a delivery's log: its attempt and the run's failures and outage. */
function onlyLogged(changes: readonly Change[]): boolean {
  return changes.every(
    (change) =>
      change.type === 'attempt' ||
      (change.type === 'run' && Object.keys(change.patch).every((field) => LOGGED_RUN_FIELDS.has(field))),
  );
}

/**
 * Commits what a delivery's end changes. A delivery's log alone (most deliveries: a step's attempt)
 * goes without waiting for the disk where the store allows it (`MessageStore.logDelivery`): a
 * process crash loses none of it, the next synced commit (the run's next publish) keeps it from a
 * power cut too, and a lost one is a log line, never a step result or a run's end. Anything else
 * (a sleep's step succeeding at its delivery, a failure callback's outcome) goes through the
 * runner's commit, synced. One fsync per step instead of two: the publish's.
 */
export async function commitDeliveryEnd(context: EngineContext, changes: readonly Change[]): Promise<void> {
  if (changes.length === 0) return;
  if (onlyLogged(changes)) {
    // The runner's commit redacts and announces; so does this path, as it bypasses it.
    const redacted = context.credentials.redactAttempts(changes);
    const applied = await context.messages.logDelivery(redacted, context.events.size > 0);
    if (applied) {
      announce(context.events, applied);
      return;
    }
  }
  await context.commit([...changes]);
}
