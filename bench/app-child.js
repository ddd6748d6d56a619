// Child process that hosts the no-op workflow app on its own core (for the throughput variant
// where the app is not on the runner's event loop, and the start-to-done row). Env WF_BENCH_TOKEN,
// WF_BENCH_RUNNER_URL (where its public POST starts runs), WF_BENCH_STEPS (the `/noop/<n>` routes,
// comma-separated; default 10); prints {"origin"} on stdout; exits when stdin closes.
import { startApp } from './lib/app.js';
import { noop } from './lib/workflows.js';

const steps = (process.env.WF_BENCH_STEPS ?? '10').split(',').map(Number);
const app = await startApp({
  routes: Object.fromEntries(steps.map((n) => [`/noop/${n}`, { workflow: noop(n) }])),
  token: process.env.WF_BENCH_TOKEN,
  ...(process.env.WF_BENCH_RUNNER_URL && { runnerUrl: process.env.WF_BENCH_RUNNER_URL }),
  backlog: 1024,
});
process.stdout.write(JSON.stringify({ origin: app.origin }) + '\n');
process.stdin.resume();
process.stdin.once('end', () => void app.close());
