// The runner of `wf start` (SQLite, exclusive) with a short drive timeout, for the injected-faults
// scenario: a late-delivery fault must outlast the runner's wait, and 30 s (the default) per fault
// would make the suite slow. Replace with `wf start --drive-timeout <ms>` once that option exists.
//   RUNNER_DB          SQLite file
//   RUNNER_TOKEN       the token
//   DRIVE_TIMEOUT_MS   how long the runner waits for a drive response's headers
// Prints `listening on http://127.0.0.1:<port>`.
import { once } from 'node:events';
import { createApiServer } from '../../dist/runner-core/api/server.js';
import { Runner } from '../../dist/runner-core/runner.js';
import { openSqliteStore } from '../../dist/runner-core/store/sqlite.js';

const store = openSqliteStore(process.env.RUNNER_DB);
const runner = new Runner({
  store,
  tokens: [process.env.RUNNER_TOKEN],
  exclusive: true,
  dispatch: { headersTimeoutMs: Number(process.env.DRIVE_TIMEOUT_MS) },
});
const server = createApiServer(runner, { host: '127.0.0.1' });
server.listen(0, '127.0.0.1');
await once(server, 'listening');
await runner.start();
console.log(`listening on http://127.0.0.1:${server.address().port}`);
process.on('SIGTERM', async () => {
  server.close();
  server.closeAllConnections();
  await runner.stop(0);
  await store.close();
  process.exit(0);
});
