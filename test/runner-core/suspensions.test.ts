import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallRequest } from '../../protocol/messages.js';
import { decodeValue } from '../../protocol/values.js';
import { performCall } from '../../runner-core/drive/call.js';
import { CallCredentials } from '../../runner-core/drive/call-credentials.js';
import { EgressGate } from '../../runner-core/egress/gate.js';
import { isFull, type Slot } from '../../runner-core/egress/slots.js';
import { parseOriginPatterns } from '../../runner-core/egress/origins.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Change, Run, RunPatch } from '../../runner-core/store/types.js';
import { pendingSteps, resolvePending, type ResolveContext } from '../../runner-core/drive/suspensions.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';

/**
 * What the runner owes a suspended run (suspensions.ts, call.ts): against a real SQLite store and
 * real HTTP calls to a node:http target on 127.0.0.1. Time is the injected `now`.
 */

const T0 = 1_700_000_000_000;
const RUN_ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';

let store: SqliteStore;
let egress: EgressGate;
let now: number;
let committed: Change[][];
const targets: Endpoint[] = [];

beforeEach(async () => {
  store = openSqliteStore(':memory:');
  egress = new EgressGate(parseOriginPatterns(['http://127.0.0.1:*']));
  now = T0;
  committed = [];
  await store.createRun({
    id: RUN_ID,
    url: 'http://127.0.0.1:9/wf',
    body: '',
    headers: {},
    retries: 3,
    retryDelayMs: 10,
    now: T0,
  });
});

afterEach(async () => {
  await Promise.all(targets.splice(0).map((t) => t.close()));
  await egress.close();
  await store.close();
});

const context = (): ResolveContext => ({
  store,
  egress,
  now: () => now,
  commit: async (changes) => {
    committed.push(changes);
    await store.apply(changes);
  },
  credentials: new CallCredentials(['token-1']),
  startRun: () => Promise.reject(new Error('Expected no child run to be started in these tests.')),
});

async function run(patch: RunPatch = {}): Promise<Run> {
  if (Object.keys(patch).length > 0) await store.apply([{ type: 'run', runId: RUN_ID, patch, at: T0 }]);
  return (await store.getRun(RUN_ID))!;
}

const base = {
  type: 'step-suspended' as const,
  runId: RUN_ID,
  group: 1,
  at: T0,
  until: null,
  eventId: null,
  request: null,
};
const sleep = (index: number, until: number): Change => ({
  ...base,
  index,
  name: `sleep-${index}`,
  kind: 'sleep',
  until,
});
const wait = (index: number, eventId: string, until: number): Change => ({
  ...base,
  index,
  name: `wait-${index}`,
  kind: 'wait',
  eventId,
  until,
});
const call = (index: number, request: CallRequest): Change => ({
  ...base,
  index,
  name: `call-${index}`,
  kind: 'call',
  request,
});

async function resolve(signal = new AbortController().signal): Promise<Awaited<ReturnType<typeof resolvePending>>> {
  return resolvePending(context(), await run(), signal);
}

async function stepValue(index: number): Promise<unknown> {
  const step = (await store.listSteps(RUN_ID))[index]!;
  expect(step.status).toBe('succeeded');
  return decodeValue(step.output ?? undefined);
}

/** A target on 127.0.0.1 that records each request and answers with `answer`. */
async function target(
  answer: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<{ url: string; seen: { method: string; headers: IncomingMessage['headers']; body: string }[] }> {
  const seen: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const endpoint = await startServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      answer(req, body, res);
    });
  });
  targets.push(endpoint);
  return { url: endpoint.url, seen };
}

describe('pendingSteps', () => {
  it('keeps the sleeps, waits and calls still running, never run steps', async () => {
    await store.apply([
      { type: 'step-started', runId: RUN_ID, index: 0, name: 'r', kind: 'run', group: 1, at: T0 },
      sleep(1, T0 + 10),
      wait(2, 'e', T0 + 10),
      {
        type: 'step-succeeded',
        runId: RUN_ID,
        index: 3,
        name: 's',
        kind: 'sleep',
        output: null,
        at: T0,
        durationMs: 0,
      },
    ]);
    expect(pendingSteps(await store.listSteps(RUN_ID)).map((s) => s.index)).toEqual([1, 2]);
  });
});

describe('resolvePending: sleeps and waits', () => {
  it('has nothing to do for a run without pending steps', async () => {
    expect(await resolve()).toBeUndefined();
    expect(committed).toEqual([]);
  });

  it('parks a run whose sleep is not due as sleeping until it is', async () => {
    await store.apply([sleep(0, T0 + 300)]);
    expect(await resolve()).toEqual({ patch: { status: 'sleeping', nextAt: T0 + 300 }, pending: 1 });
    expect(committed).toEqual([]);
  });

  it('wakes a due sleep (value undefined) and sets a sleeping run running again', async () => {
    await store.apply([sleep(0, T0 + 300)]);
    await run({ status: 'sleeping', nextAt: T0 + 300 });
    now = T0 + 300;
    expect(await resolve()).toBeUndefined();
    const [step] = await store.listSteps(RUN_ID);
    expect(step).toMatchObject({ status: 'succeeded', output: null, finishedAt: T0 + 300, durationMs: 300 });
    expect((await run()).status).toBe('running');
  });

  it('parks a run with a wait as waiting until its earliest timeout', async () => {
    await store.apply([sleep(0, T0 + 900), wait(1, 'e', T0 + 500)]);
    expect(await resolve()).toEqual({ patch: { status: 'waiting', nextAt: T0 + 500 }, pending: 2 });
  });

  it('times a due wait out: { eventData: undefined, timeout: true }', async () => {
    await store.apply([wait(0, 'e', T0 + 500)]);
    now = T0 + 500;
    expect(await resolve()).toBeUndefined();
    expect(await stepValue(0)).toEqual({ eventData: undefined, timeout: true });
  });

  it('hands a kept event to a wait registered after the notify, once', async () => {
    await store.deliverEvent({
      eventId: 'e',
      data: JSON.stringify({ data: { ok: 1 } }),
      output: '',
      now: T0,
      keepUntil: T0 + 1000,
    });
    await store.apply([wait(0, 'e', T0 + 60_000), wait(1, 'e', T0 + 60_000)]);
    expect(await resolve()).toBeUndefined();
    expect(await stepValue(0)).toEqual({ eventData: { ok: 1 }, timeout: false });
    // The event was taken: the second wait for the same id keeps waiting.
    expect(await resolve()).toEqual({ patch: { status: 'waiting', nextAt: T0 + 60_000 }, pending: 1 });
  });

  it('does not hand over an event kept past its keepUntil', async () => {
    await store.deliverEvent({
      eventId: 'e',
      data: JSON.stringify({ data: 1 }),
      output: '',
      now: T0,
      keepUntil: T0 + 100,
    });
    await store.apply([wait(0, 'e', T0 + 60_000)]);
    now = T0 + 100;
    expect(await resolve()).toEqual({ patch: { status: 'waiting', nextAt: T0 + 60_000 }, pending: 1 });
  });
});

describe('resolvePending: calls', () => {
  it('makes the call and records { status, headers, body } with a JSON body parsed', async () => {
    const { url, seen } = await target((_req, _body, res) => {
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'x-answer': 'yes' });
      res.end('{"id":7}');
    });
    await store.apply([
      call(0, {
        url: `${url}/charge?x=1`,
        method: 'POST',
        headers: { 'x-trace': 't-1', 'content-type': 'application/json' },
        body: '{"amount":5}',
      }),
    ]);
    expect(await resolve()).toBeUndefined();
    expect(seen).toEqual([
      expect.objectContaining({
        method: 'POST',
        body: '{"amount":5}',
        headers: expect.objectContaining({ 'x-trace': 't-1' }),
      }),
    ]);
    expect(await stepValue(0)).toEqual({
      status: 201,
      headers: expect.objectContaining({ 'x-answer': 'yes' }),
      body: { id: 7 },
    });
  });

  it('sends the sealed credentials for real, and stores the answer with its Set-Cookie redacted', async () => {
    const { url, seen } = await target((_req, _body, res) =>
      res.writeHead(200, { 'set-cookie': 'sid=answer-secret', 'x-answer': 'yes' }).end('ok'),
    );
    const request = new CallCredentials(['token-1']).seal({
      url,
      method: 'GET',
      headers: { Authorization: 'Bearer call-secret', 'x-trace': 't' },
    });
    await store.apply([call(0, request)]);
    expect(await resolve()).toBeUndefined();
    expect(seen[0]?.headers).toMatchObject({ authorization: 'Bearer call-secret', 'x-trace': 't' });
    expect(await stepValue(0)).toEqual({
      status: 200,
      headers: expect.objectContaining({ 'set-cookie': '[redacted]', 'x-answer': 'yes' }),
      body: 'ok',
    });
  });

  it('fails the call, naming the cause, when no configured token opens its credentials', async () => {
    const { url, seen } = await target((_req, _body, res) => res.writeHead(200).end());
    await store.apply([
      call(0, new CallCredentials(['another-token']).seal({ url, method: 'GET', headers: { cookie: 'c=1' } })),
    ]);
    expect(await resolve()).toBeUndefined();
    expect(seen).toEqual([]);
    const [step] = await store.listSteps(RUN_ID);
    expect(step).toMatchObject({
      status: 'failed',
      error: { name: 'CredentialsError', message: expect.stringContaining('None of the runner') },
    });
  });

  it('records a failed call as a step failed for good, for the replay to rethrow', async () => {
    const { url } = await target((_req, _body, res) => res.writeHead(500).end('down'));
    await store.apply([call(0, { url, method: 'GET', headers: {}, throwHttpErrors: true })]);
    expect(await resolve()).toBeUndefined();
    const [step] = await store.listSteps(RUN_ID);
    expect(step).toMatchObject({
      status: 'failed',
      error: { name: 'HttpError', message: `Call GET ${url} responded 500 (attempt 1/1).` },
    });
  });

  it('commits nothing when the drive was aborted meanwhile', async () => {
    const controller = new AbortController();
    const { url } = await target(() => controller.abort());
    await store.apply([call(0, { url, method: 'GET', headers: {} })]);
    expect(await resolve(controller.signal)).toBeUndefined();
    expect(committed).toEqual([]);
    expect((await store.listSteps(RUN_ID))[0]?.status).toBe('running');
  });
});

describe('performCall', () => {
  const never = new AbortController().signal;
  const slotFor = (url: string): Slot => {
    const slot = egress.acquire(new URL(url), 'call');
    if (isFull(slot)) throw new Error(`Expected a slot at ${url}`);
    return slot;
  };

  it('answers a non-2xx status as data, and a non-JSON body as text', async () => {
    const { url } = await target((_req, _body, res) =>
      res.writeHead(500, { 'content-type': 'text/plain' }).end('{"looks":"like json"}'),
    );
    expect(await performCall(egress, slotFor(url), { url, method: 'GET', headers: {} }, never)).toEqual({
      ok: true,
      result: {
        status: 500,
        headers: expect.objectContaining({ 'content-type': 'text/plain' }),
        body: '{"looks":"like json"}',
      },
    });
  });

  it('retries an HTTP error with throwHttpErrors, then gives up naming the attempts', async () => {
    const { url, seen } = await target((_req, _body, res) => res.writeHead(503).end());
    const result = await performCall(
      egress,
      slotFor(url),
      { url, method: 'DELETE', headers: {}, retries: 1, throwHttpErrors: true },
      never,
      () => 0,
    );
    expect(seen).toHaveLength(2);
    expect(result).toEqual({
      ok: false,
      error: { name: 'HttpError', message: `Call DELETE ${url} responded 503 (attempt 2/2).` },
    });
  });

  it('succeeds on a retry after an HTTP error', async () => {
    let n = 0;
    const { url } = await target((_req, _body, res) =>
      res.writeHead(++n === 1 ? 502 : 200, { 'content-type': 'application/json' }).end('"ok"'),
    );
    expect(
      await performCall(
        egress,
        slotFor(url),
        { url, method: 'GET', headers: {}, retries: 2, throwHttpErrors: true },
        never,
        () => 0,
      ),
    ).toMatchObject({
      ok: true,
      result: { status: 200, body: 'ok' },
    });
  });

  it('fails with a message naming the timeout when the answer takes too long', async () => {
    const { url } = await target(() => {}); // never answers
    const result = await performCall(egress, slotFor(url), { url, method: 'GET', headers: {}, timeoutMs: 100 }, never);
    expect(result).toEqual({
      ok: false,
      error: { name: 'TimeoutError', message: `Call GET ${url} took longer than 100 ms (attempt 1/1).` },
    });
  });

  it('fails with the transport error when nothing listens', async () => {
    const { url } = await target(() => {});
    await targets.pop()!.close();
    const result = await performCall(egress, slotFor(url), { url, method: 'GET', headers: {} }, never);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toMatch(
      new RegExp(`^Call GET ${url} failed \\(attempt 1/1\\): .*ECONNREFUSED`),
    );
  });
});
