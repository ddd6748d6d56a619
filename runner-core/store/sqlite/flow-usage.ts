import type { Statement } from 'better-sqlite3';
import type { FlowUsage } from '../flow-admission.js';

/**
 * A claim's reader of what a flow key uses at `now` (`admit`'s `usage`), from two statements on the
 * claimed table: `executing` (`@key`, `@now`) plucks the count of live leases, `started` (`@key`,
 * `@since`) reads `n` and `oldest` of the first drives since then. The runs' claim (store.ts) and
 * the QStash messages' claim (qstash/messages/sqlite.ts) read their tables through it.
 */
export function flowUsageReader(
  executing: Statement,
  started: Statement,
  now: number,
): (key: string, periodMs: number) => FlowUsage {
  return (key, periodMs) => {
    const inPeriod = started.get({ key, since: now - periodMs }) as { n: number; oldest: number | null };
    return {
      executing: executing.get({ key, now }) as number,
      startedInPeriod: inPeriod.n,
      oldestStart: inPeriod.oldest,
    };
  };
}
