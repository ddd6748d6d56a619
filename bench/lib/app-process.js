// Starts bench/app-child.js (the app in its own process) and hands back its origin.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { withTimeout } from './timebox.js';

const CHILD = fileURLToPath(new URL('../app-child.js', import.meta.url));

export async function startAppProcess({ token, runnerUrl, steps = [10] }) {
  const child = spawn(process.execPath, [CHILD], {
    env: {
      ...process.env,
      WF_BENCH_TOKEN: token,
      WF_BENCH_STEPS: steps.join(','),
      ...(runnerUrl && { WF_BENCH_RUNNER_URL: runnerUrl }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  try {
    const [line] = await withTimeout(once(lines, 'line'), 10_000, 'app child start');
    const { origin } = JSON.parse(line);
    return {
      urlOf: (path) => origin + path,
      async close() {
        child.stdin.end();
        await withTimeout(exited, 5_000, 'app child exit').catch(() => child.kill());
      },
    };
  } catch (error) {
    child.kill();
    throw error;
  }
}
