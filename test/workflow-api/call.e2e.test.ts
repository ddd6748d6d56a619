import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import type { CallResponse } from '../../serve/core/context.js';
import { Counter, startThroughApp, waitForFinish } from '../helpers/runner.js';
import { useWorlds, value } from './world.js';

/** `context.call`: the runner makes the HTTP request, so a slow API does not hold the route's request open. */

const worlds = useWorlds();

describe('context.call', () => {
  it('sends method, headers and body from the runner, without holding the route, and returns the parsed answer', async () => {
    const held: ServerResponse[] = [];
    const target = await worlds.target((_req, res) => held.push(res));
    worlds.defer(() => {
      for (const res of held) res.destroy();
    });
    const calls = new Counter();
    const { runner, app, openDrives } = await worlds.setup(async (context) => {
      const { url } = context.requestPayload as { url: string };
      const answer = await context.call<{ charged: number }>('charge', {
        url: `${url}/charge?order=7`,
        method: 'POST',
        headers: { 'x-trace': 'trace-1' },
        body: { amount: 42 },
        timeout: '5s',
        retries: 0,
      });
      return context.run('after', () => (calls.hit('after'), answer));
    });
    const id = await startThroughApp(app.url, { url: target.url });

    await vi.waitFor(() => expect(target.received).toHaveLength(1));
    const [request] = target.received;
    expect(request).toMatchObject({ method: 'POST', url: '/charge?order=7', body: '{"amount":42}' });
    expect(request!.headers).toMatchObject({ 'x-trace': 'trace-1', 'content-type': 'application/json' });
    // The target holds its answer: the route's request has ended all the same.
    await vi.waitFor(() => expect(openDrives()).toBe(0));
    const [step] = await runner.store.listSteps(id);
    expect(step).toMatchObject({
      index: 0,
      name: 'charge',
      kind: 'call',
      status: 'running',
      until: null,
      eventId: null,
      request: {
        url: `${target.url}/charge?order=7`,
        method: 'POST',
        headers: { 'x-trace': 'trace-1', 'content-type': 'application/json' },
        body: '{"amount":42}',
        timeoutMs: 5000,
        retries: 0,
      },
    });
    expect(calls.of('after')).toBe(0);

    held[0]!.writeHead(201, { 'content-type': 'application/json', 'x-answer': 'yes' }).end('{"charged":42}');
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    const answer = value(run.output) as CallResponse<{ charged: number }>;
    expect(answer).toEqual({
      status: 201,
      headers: expect.objectContaining({ 'content-type': 'application/json', 'x-answer': 'yes' }),
      body: { charged: 42 },
    });
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['charge', 'call', 'succeeded'],
      ['after', 'run', 'succeeded'],
    ]);
    expect(value(steps[0]!.output)).toEqual(answer);
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
    expect(calls.of('after')).toBe(1);
  });

  it('returns a 500 answer as data: the step succeeds with status 500, the body as text', async () => {
    const target = await worlds.target((_req, res) =>
      res.writeHead(500, { 'content-type': 'text/plain' }).end('upstream broke'),
    );
    const { runner, app } = await worlds.setup(async (context) => {
      const { status, body } = await context.call('get', { url: (context.requestPayload as { url: string }).url });
      return { status, body };
    });
    const { run, steps } = await waitForFinish(runner.runner, await startThroughApp(app.url, { url: target.url }));
    expect(run.status).toBe('completed');
    expect(value(run.output)).toEqual({ status: 500, body: 'upstream broke' });
    expect(steps).toMatchObject([{ kind: 'call', status: 'succeeded', request: { method: 'GET' } }]);
    expect(target.received).toHaveLength(1);
  });

  it('with throwHttpErrors and retries: 1, retries a 500 once, then fails the step; the workflow catches it and goes on', async () => {
    const target = await worlds.target((_req, res) => res.writeHead(500).end('down'));
    const caught: unknown[] = [];
    const { runner, app } = await worlds.setup(async (context) => {
      const url = (context.requestPayload as { url: string }).url;
      try {
        await context.call('flaky-api', { url, method: 'PUT', body: 'x', retries: 1, throwHttpErrors: true });
      } catch (error) {
        caught.push(error);
      }
      return context.run('fallback', () => 'used the fallback');
    });
    const id = await startThroughApp(app.url, { url: target.url });
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(target.received.map((r) => [r.method, r.body])).toEqual([
      ['PUT', 'x'],
      ['PUT', 'x'],
    ]);
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('used the fallback');
    const message = `Call PUT ${target.url}/ responded 500 (attempt 2/2).`;
    expect(steps[0]).toMatchObject({
      name: 'flaky-api',
      kind: 'call',
      status: 'failed',
      error: { name: 'HttpError', message },
    });
    expect(steps[1]).toMatchObject({ name: 'fallback', status: 'succeeded' });
    expect(caught).toHaveLength(1);
    expect(caught[0]).toMatchObject({ name: 'HttpError', message, code: 'STEP_FAILED', step: 'flaky-api' });
  });

  it('fails on its timeout with a message naming the timeout; uncaught, the run fails with it', async () => {
    const held: ServerResponse[] = [];
    const target = await worlds.target((_req, res) => held.push(res));
    worlds.defer(() => {
      for (const res of held) res.destroy();
    });
    const after = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      await context.call('slow-api', { url: (context.requestPayload as { url: string }).url, timeout: 0.2 });
      await context.run('after', () => after.hit('after'));
    });
    const id = await startThroughApp(app.url, { url: target.url });
    const { run, steps } = await waitForFinish(runner.runner, id);
    const message = `Call GET ${target.url}/ took longer than 200 ms (attempt 1/1).`;
    expect(steps).toMatchObject([
      { name: 'slow-api', kind: 'call', status: 'failed', error: { name: 'TimeoutError', message } },
    ]);
    expect(run).toMatchObject({ status: 'failed', error: { name: 'TimeoutError', message, code: 'STEP_FAILED' } });
    expect(after.of('after')).toBe(0);
  });

  it('runs calls started together at once, in one group', async () => {
    const held: ServerResponse[] = [];
    const target = await worlds.target((_req, res) => {
      held.push(res);
      // Both requests are in before either is answered: the runner made them concurrently.
      if (held.length === 2)
        for (const [i, r] of held.entries()) r.writeHead(200, { 'content-type': 'application/json' }).end(String(i));
    });
    const { runner, app } = await worlds.setup(async (context) => {
      const url = (context.requestPayload as { url: string }).url;
      const [a, b] = await Promise.all([
        context.call('a', { url: `${url}/a` }),
        context.call('b', { url: `${url}/b` }),
      ]);
      return [a.body, b.body];
    });
    const id = await startThroughApp(app.url, { url: target.url });
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    expect((value(run.output) as number[]).sort()).toEqual([0, 1]);
    expect(steps.map((s) => [s.name, s.kind, s.group])).toEqual([
      ['a', 'call', 1],
      ['b', 'call', 1],
    ]);
  });
});
