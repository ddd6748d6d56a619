import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstashApp } from './upstash-app.js';
import { stepOutputs, until, waitForRunView, type RunView } from './runner-api.js';

/**
 * Every feature of the Upstash proof, run by the real `@upstash/workflow` SDK (the app's `serve` and
 * the `Client` a user's script makes) against one wfkit runner. Each case asserts both sides: the
 * app's counters (every step body ran exactly once) and the runner's own API (the run, its steps,
 * their names and outputs). The suites (`wf start`, `wf dev`) only differ in how they start the runner.
 */

export interface UpstashHarness {
  runnerUrl: string;
  /** One of the runner's tokens, the app's QSTASH_TOKEN. */
  token: string;
  /** The app with the runner's signing keys (it verifies every delivery). */
  app: UpstashApp;
  /** The same app without signing keys, as Upstash's local-development docs run it: direct POSTs are allowed. */
  openApp?: UpstashApp;
}

export interface Echo {
  url: string;
  requests: { method: string; headers: IncomingHttpHeaders; body: string }[];
  close: () => Promise<void>;
}

/**
 * The loopback server `context.call` calls (through the runner): it answers `{ echoed: <body> }`,
 * with `answerHeaders` besides its content type (names written as given: node sends them so).
 */
export async function startEcho(answerHeaders: Record<string, string | string[]> = {}): Promise<Echo> {
  const requests: Echo['requests'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', headers: req.headers, body });
      let echoed: unknown = body;
      try {
        echoed = JSON.parse(body);
      } catch {}
      res.writeHead(200, { 'content-type': 'application/json', ...answerHeaders }).end(JSON.stringify({ echoed }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/**
 * `directPost`: the harness has an `openApp` (an app without keys) to POST to directly; hosts that
 * run one app, with the keys, start runs only through the runner.
 */
export function describeUpstashFeatures(
  label: string,
  harness: () => UpstashHarness,
  { directPost = true }: { directPost?: boolean } = {},
): void {
  describe(`${label}: an unchanged @upstash/workflow app`, () => {
    let h: UpstashHarness;
    let client: Client;
    let echo: Echo;
    const finished = (id: string, timeoutMs?: number): Promise<RunView> =>
      waitForRunView(h.runnerUrl, h.token, id, timeoutMs, h.app.output);

    beforeAll(async () => {
      h = harness();
      // What a user's script does: the Workflow Client pointed at the runner (QSTASH_URL / QSTASH_TOKEN).
      client = new Client({ baseUrl: h.runnerUrl, token: h.token });
      // Two cookies, as a login endpoint sets them: the workflow gets each (QStash gives a list per header).
      echo = await startEcho({ 'set-cookie': ['session=s1; Path=/', 'theme=dark; Path=/'] });
    });
    afterAll(async () => echo?.close());

    it('Client.trigger: two steps run once each, the runner shows them with their outputs', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('two-steps'), body: { text: 'hello' } });
      expect(workflowRunId).toMatch(/^wfr_/);
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.run.url).toBe(h.app.workflowUrl('two-steps'));
      expect(stepOutputs(view).filter(([name]) => name === 'upper' || name === 'length')).toEqual([
        ['upper', 'HELLO'],
        ['length', 5],
      ]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ upper: 1, length: 1 });
    });

    if (directPost) {
      it('a direct POST to the app starts a run (app without signing keys, as in local development)', async () => {
        if (!h.openApp) throw new Error('directPost needs the harness to have an openApp');
        const response = await fetch(h.openApp.workflowUrl('two-steps'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"text":"direct"}',
        });
        const text = await response.text();
        expect(response.status, text).toBe(200);
        const { workflowRunId } = JSON.parse(text) as { workflowRunId: string };
        const view = await waitForRunView(h.runnerUrl, h.token, workflowRunId, 20_000, h.openApp.output);
        expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
        expect(stepOutputs(view).filter(([name]) => name === 'upper' || name === 'length')).toEqual([
          ['upper', 'DIRECT'],
          ['length', 6],
        ]);
        expect(await h.openApp.countersOf(workflowRunId)).toEqual({ upper: 1, length: 1 });
      });
    }

    it("a POST to the runner's /v2/publish/<workflow URL> (QStash's curl way) starts a run of the signed app", async () => {
      const response = await fetch(`${h.runnerUrl}/v2/publish/${h.app.workflowUrl('two-steps')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
        body: '{"text":"published"}',
      });
      const text = await response.text();
      expect(response.ok, `${response.status} ${text}`).toBe(true);
      expect((JSON.parse(text) as { messageId?: string }).messageId).toEqual(expect.any(String));
      // The publish delivers to the app, whose SDK (seeing no run yet) starts a run of its own id.
      const runId = await until(
        'the published run',
        async () => {
          const ids = Object.keys(await h.app.counters())
            .filter((key) => key.endsWith(':length'))
            .map((key) => key.slice(0, -':length'.length));
          for (const id of ids) {
            const { steps } = await waitForRunView(h.runnerUrl, h.token, id, 20_000, h.app.output);
            if (steps.some((step) => step.output === 'PUBLISHED')) return id;
          }
          return undefined;
        },
        30_000,
      );
      expect(await h.app.countersOf(runId)).toEqual({ upper: 1, length: 1 });
    });

    it("a signed app refuses a direct, unsigned POST: the signatures it accepts are the runner's", async () => {
      const response = await fetch(h.app.workflowUrl('two-steps'), { method: 'POST', body: '{"text":"unsigned"}' });
      expect(response.status).toBe(500);
      expect(await response.text()).toMatch(/Upstash-Signature/);
    });

    it('parallel steps: three at once, then their sum', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('parallel'), body: { base: 10 } });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const outputs = Object.fromEntries(stepOutputs(view));
      expect(outputs).toMatchObject({ 'plus-one': 11, 'plus-two': 12, 'plus-three': 13, sum: 36 });
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'plus-one': 1, 'plus-two': 1, 'plus-three': 1, sum: 1 });
    });

    it('context.sleep: the runner holds the run for the sleep, then delivers the next step', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('sleep') });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.map((s) => s.name)).toEqual(expect.arrayContaining(['before', 'nap', 'after']));
      const before = view.steps.find((s) => s.name === 'before')!.output as number;
      const after = view.steps.find((s) => s.name === 'after')!.output as number;
      // Clocks of the app's own steps: the second ran at least the sleep's second after the first.
      expect(after - before).toBeGreaterThanOrEqual(1_000);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ before: 1, after: 1 });
    });

    it('context.call: the runner makes the request and the workflow gets its answer, a repeated header as its values', async () => {
      const calls = echo.requests.length;
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('call'), body: { url: echo.url } });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const answer = view.steps.find((s) => s.name === 'use-answer')?.output as { status: number; body: unknown };
      // The repeated Set-Cookie comes as two values, not joined into one.
      expect(answer).toEqual({
        status: 200,
        body: { echoed: { ping: 'pong' } },
        cookies: ['session=s1; Path=/', 'theme=dark; Path=/'],
      });
      // Exactly one request reached the echo server, with the body and header the workflow set.
      expect(echo.requests.slice(calls)).toMatchObject([
        { method: 'POST', headers: { 'x-proof': 'upstash' }, body: '{"ping":"pong"}' },
      ]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'use-answer': 1 });
    });

    // Upstash's Express example calls its own GET route with a JSON body and reads `req.body`; its
    // Next.js example `vercel-ai-sdk` calls with the parsed body of the AI SDK's request (an object).
    for (const [title, input, method] of [
      ['context.call with GET and a body: the target gets the body, as QStash sends it', { method: 'GET' }, 'GET'],
      [
        'context.call with an object body (not a string): the target gets its JSON, as from QStash',
        { objectBody: true },
        'POST',
      ],
    ] as const) {
      it(title, async () => {
        const calls = echo.requests.length;
        const { workflowRunId } = await client.trigger({
          url: h.app.workflowUrl('call'),
          body: { url: echo.url, ...input },
        });
        const view = await finished(workflowRunId);
        expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
        expect(view.steps.find((s) => s.name === 'use-answer')?.output).toMatchObject({
          status: 200,
          body: { echoed: { ping: 'pong' } },
        });
        expect(echo.requests.slice(calls)).toMatchObject([{ method, body: '{"ping":"pong"}' }]);
      });
    }

    it('waitForEvent + Client.notify, with Client.getWaiters showing the waiter meanwhile', async () => {
      const eventId = `approval-${randomUUID()}`;
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('wait'), body: { eventId } });
      const waiters = await until('a waiter on the event', async () => {
        const list = await client.getWaiters({ eventId });
        return list.length > 0 ? list : undefined;
      });
      expect(waiters).toHaveLength(1);
      expect(waiters[0]!.url).toBe(h.app.workflowUrl('wait'));
      const notified = await client.notify({ eventId, eventData: { approved: true } });
      expect(notified).toHaveLength(1);
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.find((s) => s.name === 'after-wait')?.output).toEqual({
        eventData: { approved: true },
        timeout: false,
      });
      expect(await client.getWaiters({ eventId })).toEqual([]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'before-wait': 1, 'after-wait': 1 });
    });

    it('a notify that comes before the wait (with the run id) is not lost: the lookback', async () => {
      const eventId = `early-${randomUUID()}`;
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('wait'),
        body: { eventId, pauseSeconds: 2 },
        workflowRunId: `lookback-${randomUUID()}`,
      });
      // The run is still in its two-second pause: nobody waits on the event yet.
      expect(await client.getWaiters({ eventId })).toEqual([]);
      await client.notify({ eventId, eventData: 'early bird', workflowRunId });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.find((s) => s.name === 'after-wait')?.output).toEqual({
        eventData: 'early bird',
        timeout: false,
      });
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'before-wait': 1, 'after-wait': 1 });
    });

    it('failureFunction: a step that keeps failing ends the run failed and the failure function runs once', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('fail'), retries: 0 });
      const view = await finished(workflowRunId);
      expect(view.run.status).toBe('failed');
      await until('the failure function', async () =>
        (await h.app.countersOf(workflowRunId))['failure-function'] ? true : undefined,
      );
      expect(await h.app.countersOf(workflowRunId)).toEqual({ doomed: 1, 'failure-function': 1 });
    });

    it('Client.dlq.resume goes on from the failed step with the earlier ones kept; dlq.restart runs the run again; each leaves the DLQ', async () => {
      /** A run of `fails-once` that failed, and its DLQ id (the letter is settled just after the run's end). */
      const failedRun = async (): Promise<{ workflowRunId: string; dlqId: string }> => {
        const { workflowRunId } = await client.trigger({
          url: h.app.workflowUrl('fails-once'),
          body: { key: randomUUID() },
        });
        expect((await finished(workflowRunId)).run.status).toBe('failed');
        const dlqId = await until('the DLQ entry', async () => {
          const { messages } = await client.dlq.list({ filter: { workflowRunId } });
          return messages[0]?.dlqId;
        });
        return { workflowRunId, dlqId };
      };
      const dlqOf = async (workflowRunId: string): Promise<unknown[]> =>
        (await client.dlq.list({ filter: { workflowRunId } })).messages;

      const old = await failedRun();
      const resumed = await client.dlq.resume({ dlqId: old.dlqId, retries: 1 });
      expect(resumed.workflowRunId).not.toBe(old.workflowRunId);
      const view = await finished(resumed.workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      // `first` kept (its result the failed run's, its body not run again); `second` ran on.
      expect(stepOutputs(view)).toEqual([
        ['first', 'kept'],
        ['second', 'kept, then second'],
      ]);
      expect(await h.app.countersOf(resumed.workflowRunId)).toEqual({ second: 1 });
      expect(await dlqOf(old.workflowRunId)).toEqual([]);
      await expect(client.dlq.resume(old.dlqId)).rejects.toThrow(/No DLQ message/);

      const again = await failedRun();
      const {
        workflowRuns: [restarted],
      } = await client.dlq.restart([again.dlqId]);
      const rerun = await finished(restarted!.workflowRunId);
      expect(rerun.run.status, JSON.stringify(rerun.run.error)).toBe('completed');
      expect(await h.app.countersOf(restarted!.workflowRunId)).toEqual({ first: 1, second: 1 });
      expect(await dlqOf(again.workflowRunId)).toEqual([]);
    });

    it('WorkflowNonRetryableError: 489 fails the run at once, with no retry', async () => {
      // Retries allowed and 100 ms apart: a retry, if the runner made one, would show in the counters.
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('non-retryable'),
        retries: 3,
        retryDelay: '100',
      });
      const view = await finished(workflowRunId);
      expect(view.run.status).toBe('failed');
      expect(JSON.stringify(view.run.error)).toContain('the input is not acceptable');
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await h.app.countersOf(workflowRunId))['route-after-validate']).toBe(1);
      expect((await h.app.countersOf(workflowRunId)).validate).toBe(1);
    });

    it('retries: a step that fails twice succeeds on its third try, which the app sees as Upstash-Retried: 2', async () => {
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('flaky'),
        retries: 3,
        retryDelay: '200',
      });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.find((s) => s.name === 'flaky')?.output).toBe('third time lucky after 2 retries');
      expect(await h.app.countersOf(workflowRunId)).toEqual({ flaky: 3 });
    });

    it('WorkflowRetryAfterError: 429 + Retry-After: 1 makes the runner come back no sooner than a second later', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('retry-after') });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const before = view.steps.find((s) => s.name === 'before')!.output as number;
      const after = view.steps.find((s) => s.name === 'after')!.output as number;
      expect(after - before).toBeGreaterThanOrEqual(1_000);
      const counts = await h.app.countersOf(workflowRunId);
      expect(counts).toMatchObject({ before: 1, after: 1 });
      // Refused once (429), then let through: once to run `after`, once more to finish.
      expect(counts['busy-check']).toBe(3);
    });

    it('flow control: runs triggered under one key with parallelism 1 never run their steps at the same time', async () => {
      const flowControl = { key: `proof-${randomUUID()}`, parallelism: 1 };
      const triggered = await client.trigger(
        [0, 1, 2].map(() => ({ url: h.app.workflowUrl('flow-controlled'), flowControl })),
      );
      const views = await Promise.all(triggered.map(({ workflowRunId }) => finished(workflowRunId)));
      const spans = views.map((view) => {
        expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
        return view.steps.find((s) => s.name === 'work')!.output as { start: number; end: number };
      });
      spans.sort((a, b) => a.start - b.start);
      for (let i = 1; i < spans.length; i++)
        expect(spans[i]!.start, 'a step began before the previous one ended').toBeGreaterThanOrEqual(spans[i - 1]!.end);
      for (const { workflowRunId } of triggered) expect(await h.app.countersOf(workflowRunId)).toEqual({ work: 1 });
    });

    it("large steps: a step list past the inline limit reaches the app through the SDK's lazy fetch", async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('large') });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.find((s) => s.name === 'sizes')?.output).toEqual([400_000, 400_000]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'large-a': 1, 'large-b': 1, sizes: 1 });
      // The deliveries after the second large step went with an empty body: the app fetched the list.
      const attempts = view.attempts as { requestBody: string }[];
      expect(attempts.filter((attempt) => attempt.requestBody === '').length).toBeGreaterThan(0);
    });

    it('Client.trigger with delay and label: the first delivery waits out the delay; Client.logs finds the run by its label', async () => {
      const label = `proof-${randomUUID().slice(0, 8)}`;
      const triggeredAt = Date.now();
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('sleep'), delay: '2s', label });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      // `before` is the app's clock when its first step ran (same host): not before the two seconds.
      expect((view.steps.find((s) => s.name === 'before')!.output as number) - triggeredAt).toBeGreaterThanOrEqual(
        2_000,
      );
      const { runs } = await client.logs({ filter: { label } });
      expect(runs.map((run) => run.workflowRunId)).toEqual([workflowRunId]);
    });

    it('Client.cancel: a waiting run is cancelled and never runs its next step', async () => {
      const eventId = `never-${randomUUID()}`;
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('cancel'), body: { eventId } });
      await until('the run to wait', async () =>
        (await client.getWaiters({ eventId })).length > 0 ? true : undefined,
      );
      expect(await client.cancel(workflowRunId)).toEqual({ cancelled: 1 });
      const view = await finished(workflowRunId);
      expect(view.run.status).toBe('cancelled');
      expect(await client.getWaiters({ eventId })).toEqual([]);
      // A notify now finds nobody, so the last step cannot run.
      expect(await client.notify({ eventId, eventData: 'too late' })).toEqual([]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ first: 1 });
    });

    it('sleepUntil at a fractional instant never wakes the run before that instant', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('sleep-until') });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const until = view.steps.find((s) => s.name === 'until')!.output as number;
      const woke = view.steps.find((s) => s.name === 'woke')!.output as number;
      // The SDK's Upstash-Not-Before says the second only (rounded down by 490 ms here); the run waits for the instant.
      expect(woke).toBeGreaterThanOrEqual(until * 1_000);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ woke: 1 });
    });

    it('the unknown-SDK handshake: the SDK starts the run over itself (Trigger-By-Sdk) and the run goes on', async () => {
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('two-steps'),
        body: { text: 'unknown' },
        headers: { 'Upstash-Workflow-Unknown-Sdk': 'true' },
      });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(stepOutputs(view).filter(([name]) => name === 'upper' || name === 'length')).toEqual([
        ['upper', 'UNKNOWN'],
        ['length', 7],
      ]);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ upper: 1, length: 1 });
      expect(h.app.output()).not.toMatch(new RegExp(`Workflow run ${workflowRunId} already exists`));
    });

    it('POST /v2/trigger/<workflow URL> starts a run, with or without the unknown-SDK header, and answers its id and creation time', async () => {
      for (const unknownSdk of [false, true]) {
        const text = unknownSdk ? 'rest unknown' : 'rest';
        const response = await fetch(`${h.runnerUrl}/v2/trigger/${h.app.workflowUrl('two-steps')}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${h.token}`,
            'content-type': 'application/json',
            'Upstash-Retries': '0',
            ...(unknownSdk && { 'Upstash-Workflow-Unknown-Sdk': 'true' }),
          },
          body: JSON.stringify({ text }),
        });
        const answer = (await response.json()) as { workflowRunId: string; workflowCreatedAt: number };
        expect(response.status, JSON.stringify(answer)).toBe(200);
        expect(answer.workflowRunId).toMatch(/^wfr_/);
        expect(answer.workflowCreatedAt).toEqual(expect.any(Number));
        const view = await finished(answer.workflowRunId);
        expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
        expect(view.steps.find((s) => s.name === 'upper')?.output).toBe(text.toUpperCase());
        expect(await h.app.countersOf(answer.workflowRunId)).toEqual({ upper: 1, length: 1 });
      }
    });

    it("a destination that is not a workflow endpoint (200 without the SDK's headers) fails the run with QStash's error", async () => {
      const plain = await startEcho();
      try {
        const { workflowRunId } = await client.trigger({ url: plain.url, body: { not: 'a workflow' }, retries: 3 });
        const view = await finished(workflowRunId);
        expect(view.run.status).toBe('failed');
        expect(JSON.stringify(view.run.error)).toContain('detected a non-workflow destination for trigger/invoke');
        // Not retried: the same endpoint answers the same way. Then the failure callback (the URL itself).
        await until('the failure callback', async () => (plain.requests.length >= 2 ? true : undefined));
        expect(plain.requests.filter((r) => !r.headers['upstash-workflow-failure-callback'])).toHaveLength(1);
        const triggered = await fetch(`${h.runnerUrl}/v2/trigger/${plain.url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.token}` },
          body: 'x',
        });
        const { workflowRunId: restRunId } = (await triggered.json()) as { workflowRunId: string };
        // Started by the REST trigger, the endpoint must answer as an SDK of v1 or later: QStash's other error.
        const rest = await finished(restRunId);
        expect(rest.run.status).toBe('failed');
        expect(JSON.stringify(rest.run.error)).toContain(
          'trigger rest api is only usable with sdk versions after v1.0.0 major version',
        );
        await until("the REST run's failure callback", async () => (plain.requests.length >= 4 ? true : undefined));
      } finally {
        await plain.close();
      }
    });

    it("limits: Upstash-Retries over the limit is QStash's 412, which the SDK makes a final failure (a malformed one stays 400)", async () => {
      const publish = (retries: string) =>
        fetch(`${h.runnerUrl}/v2/publish/${h.app.workflowUrl('two-steps')}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.token}`, 'Upstash-Retries': retries },
          body: '{}',
        });
      const over = await publish('1000000');
      expect(over.status).toBe(412);
      expect(await over.text()).toContain('Upstash-Retries 1000000');
      expect((await publish('lots')).status).toBe(400);
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('huge-retries'),
        body: { url: echo.url },
        retries: 0,
      });
      const view = await finished(workflowRunId);
      expect(view.run.status).toBe('failed');
      expect(JSON.stringify(view.run.error)).toContain('Upstash-Retries 1000000');
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'before-call': 1 });
    });

    it('message size: a 1.5 MB payload and a 4.5 MB step result go through (QStash allows 10 MB); a body over the cap is 413', {
      timeout: 90_000,
    }, async () => {
      const text = 'p'.repeat(1_500_000);
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('big-payload'), body: { text } });
      const view = await finished(workflowRunId, 60_000);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(view.steps.find((s) => s.name === 'measure')?.output).toEqual({ payload: 1_500_000, result: 4_500_000 });
      expect(await h.app.countersOf(workflowRunId)).toEqual({ grow: 1, measure: 1 });
      // Most of its time is the SDK's own: it decodes base64 a character at a time (seconds for a few MB).
      const tooLarge = await fetch(`${h.runnerUrl}/v2/publish/${h.app.workflowUrl('two-steps')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}` },
        body: 'x'.repeat(11 * 1024 * 1024),
      });
      expect(tooLarge.status).toBe(413);
    });

    it('Client.logs: the run, its state and its steps, as the Upstash console would list them', async () => {
      const { workflowRunId } = await client.trigger({ url: h.app.workflowUrl('two-steps'), body: { text: 'logs' } });
      await finished(workflowRunId);
      const { runs } = await client.logs({ filter: { workflowRunId } });
      expect(runs).toHaveLength(1);
      const [run] = runs;
      expect(run).toMatchObject({
        workflowRunId,
        workflowUrl: h.app.workflowUrl('two-steps'),
        workflowState: 'RUN_SUCCESS',
      });
      expect(typeof run!.workflowRunCreatedAt).toBe('number');
      // Groups are sequential or parallel; in-progress groups carry no `out`: read every step as a plain record.
      const steps = (run!.steps as { steps: { stepName?: string; out?: unknown }[] }[])
        .flatMap((group) => group.steps)
        .filter((s) => s.stepName === 'upper' || s.stepName === 'length');
      expect(steps.map((s) => [s.stepName, s.out])).toEqual(
        expect.arrayContaining([
          ['upper', expect.stringContaining('LOGS')],
          ['length', expect.anything()],
        ]),
      );
    });
  });
}
