import { describe, expect, it } from 'vitest';
import { attemptOutcome, type AttemptEnd } from '../../api/attempt-outcome.js';

/**
 * The stored text of every kind of attempt end: the same as the strings the runner wrote before the
 * type existed, so the rows already in a database read as they did (no migration).
 */
describe('attemptOutcome', () => {
  it.each<[AttemptEnd, string]>([
    [{ to: 'route', end: 'done' }, 'done'],
    [{ to: 'route', end: 'suspend' }, 'suspend'],
    [{ to: 'route', end: 'error' }, 'error'],
    [{ to: 'route', end: 'aborted' }, 'aborted'],
    [{ to: 'route', end: 'retry' }, 'retry'],
    [{ to: 'route', end: 'unreachable' }, 'unreachable'],
    [{ to: 'failure-function', end: 'done' }, 'failure-function done'],
    [{ to: 'failure-function', end: 'error' }, 'failure-function error'],
    [{ to: 'call', end: 'retry' }, 'call retry'],
    [{ to: 'alert', end: 'delivered' }, 'alert delivered'],
    [{ to: 'alert', end: 'failed' }, 'alert failed'],
  ])('writes %j as "%s"', (end, text) => {
    expect(attemptOutcome(end)).toBe(text);
  });
});
