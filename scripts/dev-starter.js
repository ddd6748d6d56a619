// `npm run dev`: the whole local loop in one command, for a first look at wfkit.
// Starts `wf dev` (runner + SQLite in .wf/dev.db) and the Hono starter app from
// templates/hono-node with the same token, starts one demo run, and streams both logs.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runnerPort = Number(process.env.WF_RUNNER_PORT ?? 7766);
const appPort = Number(process.env.PORT ?? 3000);
const token = process.env.WF_TOKEN ?? 'wf_' + randomBytes(18).toString('base64url');
const runnerUrl = `http://127.0.0.1:${runnerPort}`;
const appUrl = `http://127.0.0.1:${appPort}/workflow`;

// The starter imports `wfkit/hono` as an app would; inside this repo that name points at the repo itself.
const link = join(root, 'node_modules', 'wfkit');
if (!existsSync(link)) {
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync('..', link, 'dir');
}

const children = [];
function start(label, args, env) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) console.log(`${label} ${line}`);
    });
  }
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${label} exited (${signal ?? code}); stopping.`);
      stop(1);
    }
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGINT');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on('exit', r))))).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function waitFor(url, what) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  console.error(`${what} did not come up at ${url} within 20 s.`);
  stop(1);
}

start('[wf] ', ['dist/cli/index.js', 'dev', '--no-tui', '--port', String(runnerPort), '--token', token]);
start('[app]', ['templates/hono-node/src/server.ts'], { WF_TOKEN: token, WF_RUNNER_URL: runnerUrl, PORT: String(appPort) });
await waitFor(`${runnerUrl}/healthz`, 'The runner');
await waitFor(`http://127.0.0.1:${appPort}/`, 'The app');

console.log(`\nReady. Start a run:\n  curl -X POST ${appUrl} -H 'content-type: application/json' -d '{"text":"hello"}'`);
console.log(`Inspect: WF_TOKEN=${token} npx wf runs   ·   npx wf logs <runId>   ·   Ctrl-C stops both.\n`);
const response = await fetch(appUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hello"}' });
console.log(`demo run started: ${await response.text()}`);
