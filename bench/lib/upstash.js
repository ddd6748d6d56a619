// The Upstash-protocol row: a 10-step run of the real @upstash/workflow SDK (Hono on Node, started
// with Client.trigger) beside the native 10-step run (wfkit's serve(), started by a POST to the
// app), both on one runner, and the same SDK app against an in-memory QStash stand-in (the floor:
// the SDK's own cost, no storage), interleaved run by run so load from elsewhere hits all alike.
import { randomBytes } from 'node:crypto';
import { serve as listen } from '@hono/node-server';
import { Client } from '@upstash/workflow';
import { serve as upstashServe } from '@upstash/workflow/hono';
import { Hono } from 'hono';
import { startApp } from './app.js';
import { startQstashStandIn } from './qstash-standin.js';
import { startRunner } from './runner-harness.js';
import { createClient } from './start-run.js';
import { round, summarize } from './stats.js';
import { deadline, withTimeout } from './timebox.js';
import { noop } from './workflows.js';

const STEPS = 10;

/** Resolves `wait(id)` once `done(id)` was called (before or after), within `ms`. */
function runEnds() {
  const ended = new Set();
  const waiters = new Map();
  return {
    done(id) {
      const waiter = waiters.get(id);
      if (waiter) waiter();
      else ended.add(id);
    },
    wait(id, ms) {
      if (ended.delete(id)) return Promise.resolve();
      return withTimeout(new Promise((resolve) => waiters.set(id, resolve)), ms, `stand-in run ${id}`).finally(() =>
        waiters.delete(id),
      );
    },
  };
}

/** The Upstash app: one route of `steps` no-op steps, its QStash settings passed as the `env` option (the SDK's own knob). */
export async function startUpstashApp({ runnerUrl, token, keys, steps }) {
  const app = new Hono();
  const env = {
    QSTASH_URL: runnerUrl,
    QSTASH_TOKEN: token,
    QSTASH_CURRENT_SIGNING_KEY: keys.current,
    QSTASH_NEXT_SIGNING_KEY: keys.next,
  };
  app.post(
    '/noop',
    upstashServe(
      async (context) => {
        for (let i = 0; i < steps; i++) await context.run('s' + i, () => i);
      },
      { env, disableTelemetry: true },
    ),
  );
  const server = await new Promise((resolve) => {
    const s = listen({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  return {
    server,
    url: `http://127.0.0.1:${server.address().port}/noop`,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Sums the time `server` spends on the requests `counted` picks (arrival to the response's end)
 * into `sink().key` while `sink()` gives an object: the phase breakdown of the Upstash run.
 */
function timeRequests(server, counted, sink, key) {
  server.on('request', (req, res) => {
    const into = sink();
    if (!into || !counted(req)) return;
    const t0 = performance.now();
    res.once('finish', () => (into[key] += performance.now() - t0));
  });
}

/**
 * Where an Upstash run's time goes, per step (medians over the runs): the app's own work (the SDK
 * and Hono, a delivery's handling minus the publish it waits for), the runner answering the app's
 * publishes, and the rest (the runner between an answer and the next delivery's arrival, with the
 * run's start and end spread over the steps). One process: the app's and the runner's work share a thread.
 */
function breakdown(phases, steps) {
  const perStep = (pick) => round(summarize(phases.map(pick)).median / steps, 4);
  return [
    { phase: 'app: the SDK and Hono (a delivery minus its publish)', perStepMs: perStep((p) => p.app - p.publish) },
    { phase: 'runner: answer a publish (store the result, settle, hold)', perStepMs: perStep((p) => p.publish) },
    {
      phase: 'runner: answer read -> next delivery at the app (hand-off, list, sign, send, attempt log; start and end)',
      perStepMs: perStep((p) => p.run - p.app),
    },
  ];
}

/**
 * Sequential runs of both protocols: `warmup` unmeasured rounds, then up to `runs` measured ones
 * within `maxMs`. Returns the medians, per step, and the Upstash run as a multiple of the native one.
 */
export async function measureUpstash({ token, runs = 30, warmup = 3, maxMs = 30_000, log = () => {} }) {
  const keys = {
    current: `sig_${randomBytes(24).toString('base64url')}`,
    next: `sig_${randomBytes(24).toString('base64url')}`,
  };
  const harness = await startRunner({
    token,
    detect: 'events',
    api: true,
    label: 'upstash',
    runnerOptions: { upstashSigningKeys: keys },
  });
  const native = await startApp({ routes: { '/noop': { workflow: noop(STEPS) } }, token, runnerUrl: harness.apiUrl });
  const upstash = await startUpstashApp({ runnerUrl: harness.apiUrl, token, keys, steps: STEPS });
  const standInEnds = runEnds();
  const standIn = await startQstashStandIn({ token, signingKey: keys.current, onEnd: standInEnds.done });
  const floor = await startUpstashApp({ runnerUrl: standIn.url, token, keys, steps: STEPS });
  const nativeClient = createClient();
  const upstashClient = new Client({ baseUrl: harness.apiUrl, token });
  const floorClient = new Client({ baseUrl: standIn.url, token });
  const runner = (start) => async () => harness.waitFor(await start(), 30_000);
  const variants = [
    { label: 'native serve(), POST to the app', run: runner(() => nativeClient.start(native.urlOf('/noop'))) },
    {
      label: '@upstash/workflow on Hono, Client.trigger (QStash API)',
      run: runner(
        async () => (await upstashClient.trigger({ url: upstash.url, disableTelemetry: true })).workflowRunId,
      ),
    },
    {
      label: 'the same SDK app against an in-memory QStash stand-in (no storage)',
      run: async () => {
        const { workflowRunId } = await floorClient.trigger({ url: floor.url, disableTelemetry: true });
        await standInEnds.wait(workflowRunId, 30_000);
      },
    },
  ];
  // The Upstash run being measured: its phases (ms) are summed while it runs.
  let current = null;
  const phases = [];
  timeRequests(
    upstash.server,
    () => true,
    () => current,
    'app',
  );
  timeRequests(
    harness.server,
    (req) => /^\/v2\/(batch|publish)\b/.test(req.url ?? ''),
    () => current,
    'publish',
  );
  const once = async (variant, measured = false) => {
    const traced = measured && variant === variants[1];
    if (traced) current = { app: 0, publish: 0, run: 0 };
    const t0 = performance.now();
    await variant.run();
    const ms = performance.now() - t0;
    if (traced) phases.push({ ...current, run: ms });
    current = null;
    return ms;
  };
  try {
    log(`Upstash protocol beside native, ${STEPS} steps`);
    const time = deadline(maxMs);
    for (let i = 0; i < warmup && !time.passed(); i++) for (const v of variants) await once(v);
    const samples = variants.map(() => []);
    for (let i = 0; i < runs && !time.passed(); i++)
      for (const [k, v] of variants.entries()) samples[k].push(await once(v, true));
    if (standIn.failures.length > 0) throw new Error(`the stand-in's deliveries failed: ${standIn.failures[0]}`);
    const [nativeRun, upstashRun, floorRun] = samples.map((s) => summarize(s));
    return {
      steps: STEPS,
      runs: samples[1].length,
      rows: variants.map((v, k) => {
        const run = summarize(samples[k]);
        return {
          label: v.label,
          runMs: { median: round(run.median), p99: round(run.p99) },
          perStepMs: round(run.median / STEPS, 4),
        };
      }),
      upstashOverNative: round(upstashRun.median / nativeRun.median, 2),
      // What the SDK costs by itself, and what the runner adds to it (per run, median minus median).
      floorOverNative: round(floorRun.median / nativeRun.median, 2),
      runnerShareMs: round(upstashRun.median - floorRun.median),
      phases: breakdown(phases, STEPS),
    };
  } finally {
    await nativeClient.close();
    await upstash.close();
    await floor.close();
    await standIn.close();
    await native.close();
    await harness.close();
  }
}
