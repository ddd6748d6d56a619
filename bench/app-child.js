// Child process that hosts the no-op workflow app on its own core (for the throughput variant
// where the app is not on the runner's event loop). Env WF_BENCH_TOKEN; prints {"origin"} on stdout;
// exits when stdin closes.
import { startApp } from './lib/app.js';
import { noop } from './lib/workflows.js';

const app = await startApp({
  routes: { '/noop/10': { workflow: noop(10) } },
  token: process.env.WF_BENCH_TOKEN,
  backlog: 1024,
});
process.stdout.write(JSON.stringify({ origin: app.origin }) + '\n');
process.stdin.resume();
process.stdin.once('end', () => void app.close());
