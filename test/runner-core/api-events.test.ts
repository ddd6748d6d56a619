import type { ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newRunId } from '../../runner-core/ids.js';
import type { Attempt, Run } from '../../runner-core/store/types.js';
import { OMITTED_WHEN_SLIM } from '../../api/events.js';
import { TEST_TOKEN, startTestRunner, type TestRunner } from '../helpers/runner.js';

/**
 * `GET /v1/events`: slim events by default, whole ones with `?bodies=1`, an `id:` on each, and
 * bounded memory for a subscriber that stops reading. Events are emitted on the runner's real
 * bus, so a test controls their size without running workflows.
 */

let runner: TestRunner | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await runner?.close();
  runner = undefined;
});

const KIB = 1024;

function run(id = newRunId(), body = '{"n":1}'): Run {
  const now = Date.now();
  return {
    id,
    url: 'http://127.0.0.1:1/w',
    status: 'completed',
    body,
    headers: { 'content-type': 'application/json' },
    createdAt: now,
    updatedAt: now,
    finishedAt: now,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 1,
    attempts: 1,
    output: '[1]',
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
  };
}

function attempt(runId: string, seq: number, responseBody: string): Attempt {
  return {
    runId,
    seq,
    startedAt: Date.now(),
    durationMs: 1,
    requestUrl: 'http://127.0.0.1:1/w',
    requestHeaders: { 'wf-run-id': runId },
    requestBody: '{}',
    responseStatus: 200,
    responseHeaders: { 'content-type': 'application/x-ndjson' },
    responseBody,
    outcome: 'done',
    error: null,
  };
}

interface Frame {
  id: string | undefined;
  event: string;
  data: any;
}

/** Reads frames until `count` events came (comments skipped). */
async function readFrames(response: Response, count: number): Promise<Frame[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const frames: Frame[] = [];
  let buffer = '';
  try {
    while (frames.length < count) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`The stream ended after ${frames.length} events.`);
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        if (event === undefined) continue;
        frames.push({ id: /^id: (.*)$/m.exec(block)?.[1], event, data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) });
      }
    }
    return frames;
  } finally {
    await reader.cancel();
  }
}

/** Subscribes: the runner registers a stream before it answers 200, so once the headers are here it is live. */
async function subscribe(query: string): Promise<Response> {
  const response = await fetch(`${runner!.url}/v1/events${query}`, {
    headers: { authorization: `Bearer ${TEST_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return response;
}

describe('GET /v1/events: slim and whole events', () => {
  it('leaves the bodies out by default, marks the event slim, and numbers the events', async () => {
    runner = await startTestRunner();
    const response = await subscribe('');
    const r = run();
    runner.runner.events.emit({ type: 'run', run: r });
    runner.runner.events.emit({
      type: 'step',
      step: {
        runId: r.id,
        index: 0,
        name: 'a',
        kind: 'run',
        status: 'succeeded',
        output: '[2]',
        error: null,
        startedAt: 1,
        finishedAt: 2,
        durationMs: 1,
        reportedExecutions: 1,
        failures: 0,
        group: null,
        until: null,
        eventId: null,
        request: null,
      },
    });
    runner.runner.events.emit({ type: 'attempt', attempt: attempt(r.id, 1, 'x'.repeat(10 * KIB)) });
    const frames = await readFrames(response, 3);
    expect(frames.map((f) => f.event)).toEqual(['run', 'step', 'attempt']);
    const ids = frames.map((f) => Number(f.id));
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
    expect(ids[2]).toBeGreaterThan(ids[1]!);
    for (const frame of frames) expect(frame.data.slim).toBe(true);
    const [runFrame, stepFrame, attemptFrame] = frames;
    for (const key of OMITTED_WHEN_SLIM.run) expect(runFrame!.data.run).not.toHaveProperty(key);
    for (const key of OMITTED_WHEN_SLIM.step) expect(stepFrame!.data.step).not.toHaveProperty(key);
    for (const key of OMITTED_WHEN_SLIM.attempt) expect(attemptFrame!.data.attempt).not.toHaveProperty(key);
    expect(runFrame!.data.run).toMatchObject({ id: r.id, status: 'completed', stepsDone: 1, url: r.url });
    expect(attemptFrame!.data.attempt).toMatchObject({ runId: r.id, seq: 1, responseStatus: 200, outcome: 'done' });
  });

  it('sends whole events with ?bodies=1, without the slim mark', async () => {
    runner = await startTestRunner();
    const response = await subscribe('?bodies=1');
    const r = run();
    const a = attempt(r.id, 1, 'y'.repeat(KIB));
    runner.runner.events.emit({ type: 'run', run: r });
    runner.runner.events.emit({ type: 'attempt', attempt: a });
    const frames = await readFrames(response, 2);
    // The API's run: the stored devalue text as `outputEncoded`, and the plain value beside it.
    const { output, ...stored } = r;
    expect(output).toBe('[1]');
    expect(frames[0]!.data).toEqual({ type: 'run', run: { ...stored, output: 1, outputEncoded: '[1]' } });
    expect(frames[1]!.data).toEqual({ type: 'attempt', attempt: a });
  });

  it('answers 400 to a bodies value it does not know', async () => {
    runner = await startTestRunner();
    const response = await fetch(`${runner.url}/v1/events?bodies=yes`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: 'BAD_REQUEST', message: 'Expected `bodies` to be 1 or 0, got "yes".' },
    });
  });

  it('refuses streams over the subscriber limit with 429, and takes one again after a close', async () => {
    runner = await startTestRunner({ api: { events: { maxSubscribers: 2 } } });
    const streams: ServerResponse[] = [];
    runner.server.on(
      'request',
      (req, res: ServerResponse) => void (req.url?.startsWith('/v1/events') && streams.push(res)),
    );
    const first = await subscribe('');
    await subscribe('');
    const third = await fetch(`${runner.url}/v1/events`);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect((await third.json()).error.code).toBe('TOO_MANY_SUBSCRIBERS');
    await first.body!.cancel();
    await vi.waitFor(() => expect(streams[0]!.closed).toBe(true));
    const again = await fetch(`${runner.url}/v1/events`);
    expect(again.status).toBe(200);
    await again.body!.cancel();
  });
});

describe('GET /v1/events: a subscriber that stops reading', () => {
  it('holds at most the buffer cap for it, then disconnects it; a reading subscriber stays', async () => {
    const cap = 256 * KIB;
    runner = await startTestRunner({ api: { events: { maxBufferedBytes: cap } } });
    const responses: ServerResponse[] = [];
    runner.server.on('request', (req, res: ServerResponse) => {
      if (req.url?.startsWith('/v1/events')) responses.push(res);
    });
    // A raw client that asks for whole events and never reads a byte of the answer.
    const { port } = new URL(runner.url);
    const stalled = connect(Number(port), '127.0.0.1');
    sockets.push(stalled);
    stalled.pause();
    stalled.write(`GET /v1/events?bodies=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n\r\n`);
    await vi.waitFor(() => expect(responses[0]?.headersSent).toBe(true));
    const reading = await subscribe('');
    const readingRes = responses[1]!;
    const stalledRes = responses[0]!;

    const body = 'z'.repeat(64 * KIB);
    const r = run();
    let maxBuffered = 0;
    let emitted = 0;
    // Bounded: 2000 events of 64 KiB are far more than any socket buffer takes.
    for (; emitted < 2000 && !stalledRes.destroyed; emitted++) {
      runner.runner.events.emit({ type: 'attempt', attempt: attempt(r.id, emitted + 1, body) });
      maxBuffered = Math.max(maxBuffered, stalledRes.destroyed ? 0 : stalledRes.writableLength);
      if (emitted % 8 === 7) await nextTurn();
    }
    expect(stalledRes.destroyed, `still connected after ${emitted} events`).toBe(true);
    // The cap plus the one event whose write passed it.
    expect(maxBuffered).toBeLessThanOrEqual(cap + body.length + 2 * KIB);
    expect(maxBuffered).toBeGreaterThan(0);
    // Reading now drains what the kernel still held, then the end: the runner closed the connection.
    stalled.on('error', () => {});
    stalled.resume();
    await vi.waitFor(() => expect(stalled.closed).toBe(true), { timeout: 10_000 });
    // The reader is still subscribed and gets what comes next.
    expect(readingRes.destroyed).toBe(false);
    runner.runner.events.emit({ type: 'run', run: run(r.id) });
    const frames = await readFrames(reading, 1);
    expect(frames.at(-1)!.event).toBeDefined();
  });
});
