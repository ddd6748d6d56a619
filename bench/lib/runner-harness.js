// The runner under test: Runner + SQLite on a fresh temp file (exclusive) or another store
// (PostgreSQL: `openStore`), optional HTTP API, and a way to await a run's end (through
// runner.events, or at the store's commit).
import { Runner, createApiServer, openSqliteStore } from '../../dist/runner-core/index.js';
import { probeStore } from './store-probe.js';
import { tempDbPath } from './temp-db.js';
import { withTimeout } from './timebox.js';

/**
 * detect: 'events' subscribes to runner.events (the public way), 'store' watches commits
 * instead (no listener, so the runner skips its per-commit event reads).
 */
export async function startRunner({
  token,
  detect = 'events',
  api = false,
  runnerOptions = {},
  label = 'runner',
  trace,
  openStore,
}) {
  // openStore: async () => ({ store, remove }) for a store other than a fresh SQLite file; such a
  // store is shared (not exclusive) and its calls are timed until they settle (network round trips).
  const file = openStore ? await openStore() : tempDbPath(label);
  const finished = new Map(); // runId -> status, for runs that end before anyone waits
  const waiters = new Map();
  const settle = (runId, status) => {
    const waiter = waiters.get(runId);
    if (waiter) {
      waiters.delete(runId);
      waiter(status);
    } else finished.set(runId, status);
    trace?.('run finished (seen by the bench)');
  };
  const store = openStore ? file.store : openSqliteStore(file.path);
  const probe = probeStore(store, detect === 'store' ? settle : undefined, trace, {
    timing: openStore ? 'async' : 'sync',
  });
  const runner = new Runner({ store: probe.store, tokens: [token], exclusive: !openStore, ...runnerOptions });
  let unsubscribe = () => {};
  if (detect === 'events') {
    unsubscribe = runner.events.subscribe((event) => {
      if (event.type === 'run' && ['completed', 'failed', 'cancelled'].includes(event.run.status))
        settle(event.run.id, event.run.status);
    });
  }
  await runner.start();

  let server;
  let apiUrl;
  if (api) {
    server = createApiServer(runner, { host: '127.0.0.1' });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    apiUrl = `http://127.0.0.1:${server.address().port}`;
  }

  return {
    runner,
    probe,
    apiUrl,
    /** The HTTP API's server (with `api`): the bench watches its requests. */
    server,
    /** Resolves when `runId` completes; rejects if it fails or `ms` pass. */
    async waitFor(runId, ms = 15_000) {
      let status = finished.get(runId);
      if (status === undefined) {
        status = await withTimeout(new Promise((resolve) => waiters.set(runId, resolve)), ms, `run ${runId}`).finally(
          () => waiters.delete(runId),
        );
      }
      finished.delete(runId);
      if (status !== 'completed') {
        const run = await probe.store.getRun(runId);
        throw new Error(`run ${runId} ended ${status}: ${JSON.stringify(run?.error)}`);
      }
    },
    async close() {
      unsubscribe();
      if (server) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await runner.stop(1_000);
      await probe.store.close();
      file.remove();
    },
  };
}
