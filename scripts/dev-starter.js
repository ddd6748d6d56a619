// `npm run dev`: the whole local loop in one command, for a first look at wfkit.
// Runs `wf dev` (runner + SQLite in .wf/dev.db + the terminal dashboard on a TTY, plain lines
// otherwise) with the Hono starter from templates/hono-node as the app it starts and checks,
// then starts one demo run so there is something to look at. Extra arguments go to `wf dev`.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// Built by `npm run dev` just before: the same watch `wf dev` keeps on its parent.
import { watchParent } from '../dist/cli/lib/parent-watch.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runnerPort = process.env.WF_RUNNER_PORT ?? '7766';
const appPort = process.env.PORT ?? '3000';

// The starter imports `wfkit/hono` as an app would; inside this repo that name is the SDK workspace
// (packages/wfkit, filled by `npm run build`), which `npm install` links into node_modules.
const link = join(root, 'node_modules', 'wfkit');
if (!existsSync(link)) {
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync('../packages/wfkit', link, 'dir');
}

// A smaller young generation keeps the runner's memory flat under bursts (see README, Benchmark).
const args = [
  '--max-semi-space-size=8',
  'dist/cli/index.js',
  'dev',
  '--port',
  runnerPort,
  '--app-port',
  appPort,
  '--route',
  '/workflow',
  ...process.argv.slice(2),
];
const wf = spawn(process.execPath, [...args, '--', process.execPath, 'templates/hono-node/src/server.ts'], {
  cwd: root,
  env: { ...process.env, PORT: appPort },
  stdio: 'inherit',
});
// We exit with `wf dev`, once it has stopped the app and the runner. Whatever stops us stops it with
// one SIGTERM: Ctrl-C (which reaches it too, from the terminal: it takes the first stop signal and
// ignores the rest, only a second Ctrl-C makes it hurry), npm forwarding a process manager's or an
// IDE's SIGTERM or SIGINT (`exec` in package.json makes npm our parent), a closed terminal
// (SIGHUP), or the death of whoever started us with no signal at all (npm SIGKILLed, or npm's own
// parent killed). `wf dev` watches its own parent (us) the same way, for when we are SIGKILLed.
let stopping = false;
const stopWf = () => {
  if (stopping) return;
  stopping = true;
  wf.kill('SIGTERM');
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stopWf);
const parent = watchParent();
void parent.gone.then(stopWf);
wf.on('exit', (code, signal) => {
  parent.stop();
  process.exit(code ?? (signal ? 1 : 0));
});

// One demo run, once the app answers (the dashboard shows it; `curl` starts more).
const deadline = Date.now() + 60_000;
while (Date.now() < deadline && wf.exitCode === null) {
  try {
    await fetch(`http://127.0.0.1:${appPort}/`);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
await fetch(`http://127.0.0.1:${appPort}/workflow`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{"text":"hello"}',
}).catch(() => {});
