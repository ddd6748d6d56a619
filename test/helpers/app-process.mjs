// A real app process for the fuzz and chaos suites: the built wfkit adapter (`wfkit/node`, or
// `wfkit/hono` on @hono/node-server) on 127.0.0.1, one workflow route, and a log of every step
// execution, so a test can check "no committed step executed again" across kill -9 of this process.
//   APP_FRAMEWORK   node (default) | hono
//   PORT            where to listen (0: any free port; a restart passes the old one)
//   APP_ROUTE       the route path (default /workflow)
//   APP_PUBLIC_URL  the route's public URL (`url` option), e.g. a fault proxy's; default its own URL
//   APP_LOG         NDJSON file: one {"e":"start"} line when a step execution starts, one {"e":"end"}
//                   with its output when it returns (appendFileSync: a kill -9 loses nothing written)
//   APP_TIME_BUDGET_MS  the route's `timeBudgetMs` (a small one splits a run into several drives)
//   WF_TOKEN, WF_RUNNER_URL as for any app.
// The workflow: payload { stepMs: number[] } runs one step per entry, each awaiting that many ms,
// and returns an output unique to the execution (`runId:index:executionId`).
// Signals: SIGUSR2 closes the listener and drops every connection (an outage); the next SIGUSR2
// listens again on the same port. It prints `app listening on <url>` and `app closed`.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const framework = process.env.APP_FRAMEWORK ?? 'node';
const route = process.env.APP_ROUTE ?? '/workflow';
const logFile = process.env.APP_LOG;

function record(line) {
  if (logFile) appendFileSync(logFile, `${JSON.stringify(line)}\n`);
}

async function workflow(context) {
  const payload = context.requestPayload ?? {};
  const stepMs = Array.isArray(payload.stepMs) ? payload.stepMs : [];
  const outputs = [];
  for (let index = 0; index < stepMs.length; index++) {
    outputs.push(
      await context.run(`step-${index}`, async () => {
        const exec = randomUUID();
        record({ e: 'start', runId: context.workflowRunId, index, exec, at: Date.now(), pid: process.pid });
        await sleep(Number(stepMs[index]) || 0);
        const output = `${context.workflowRunId}:${index}:${exec}`;
        record({ e: 'end', runId: context.workflowRunId, index, exec, output, at: Date.now(), pid: process.pid });
        return output;
      }),
    );
  }
  return outputs.length;
}

/** The request listener, built once the public URL is known (after the first listen). */
async function buildListener(publicUrl) {
  // The default retry settings (3 retries from 1 s): the chaos scenarios are about those.
  const options = { url: publicUrl };
  if (process.env.APP_TIME_BUDGET_MS) options.timeBudgetMs = Number(process.env.APP_TIME_BUDGET_MS);
  if (framework === 'hono') {
    const [{ Hono }, { getRequestListener }, { serve }] = await Promise.all([
      import('hono'),
      import('@hono/node-server'),
      import('../../dist/serve/adapters/hono.js'),
    ]);
    const app = new Hono();
    app.all(route, serve(workflow, options));
    return getRequestListener(app.fetch);
  }
  const { serve } = await import('../../dist/serve/adapters/node.js');
  const handle = serve(workflow, options);
  return (req, res) => {
    // Not `new URL(req.url, base)`: it throws on targets like `//[`, and this app must not crash for its own sake.
    if ((req.url ?? '/').split('?')[0] === route) return void handle(req, res);
    res.writeHead(404).end('not found');
  };
}

let listener = (_req, res) => res.writeHead(503).end();
const server = createServer((req, res) => listener(req, res));
let port = Number(process.env.PORT ?? 0);

function listen() {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      port = server.address().port;
      resolve();
    });
  });
}

await listen();
const ownUrl = `http://127.0.0.1:${port}${route}`;
listener = await buildListener(process.env.APP_PUBLIC_URL || ownUrl);
console.log(`app listening on ${ownUrl} pid ${process.pid}`);

// SIGUSR1 is Node's debugger signal, so one signal toggles: close when listening, listen when closed.
// A timer keeps the process alive while nothing listens.
let outage;
process.on('SIGUSR2', () => {
  if (server.listening) {
    outage = setInterval(() => {}, 1_000);
    server.close(() => console.log('app closed'));
    server.closeAllConnections();
    return;
  }
  listen().then(
    () => {
      clearInterval(outage);
      console.log(`app listening on ${ownUrl} pid ${process.pid}`);
    },
    (error) => console.log(`app could not listen again: ${error.message}`),
  );
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
