import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../api/events.js';
import { Client } from '../../serve/client.js';
import { cuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js';
import { TEST_TOKEN, startTestRunner, type TestRunner, type TestRunnerOptions } from '../helpers/runner.js';
import { makeRun, storedRun } from '../tui/fixtures.js';

/**
 * `Client.events()` against a real runner, through a proxy that can drop the stream: it
 * reconnects, sends `Last-Event-ID`, and the runner replays what it missed (no gap, no
 * duplicate), or sends `reset` when its ring no longer holds it.
 */

let runner: TestRunner | undefined;
let proxy: CuttingProxy | undefined;
const controller = { current: new AbortController() };
afterEach(async () => {
  controller.current.abort();
  controller.current = new AbortController();
  await proxy?.close();
  await runner?.close();
  runner = proxy = undefined;
});

/** Follows through the proxy, recording the ids of the runs it is told about, opens and resets. */
function follow(client: Client): { runs: string[]; opens: boolean[]; resets: () => number; done: Promise<void> } {
  const runs: string[] = [];
  const opens: boolean[] = [];
  let resets = 0;
  const done = client.events({
    signal: controller.current.signal,
    retryMs: 20,
    onEvent: (event: StreamEvent) => void (event.type === 'run' && runs.push(event.run.id)),
    onOpen: ({ reconnected }) => void opens.push(reconnected),
    onReset: () => void resets++,
  });
  return { runs, opens, resets: () => resets, done };
}

const emitRuns = (from: number, to: number): void => {
  for (let n = from; n <= to; n++) runner!.runner.events.emit({ type: 'run', run: storedRun(makeRun(n)) });
};
const ids = (from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => makeRun(from + i).id);

/** A runner behind a cutting proxy, followed through it, with runs 1..`first` already received. */
async function followingThroughProxy(first: number, options?: TestRunnerOptions): Promise<ReturnType<typeof follow>> {
  runner = await startTestRunner(options);
  proxy = await cuttingProxy(runner.url);
  const followed = follow(new Client({ runnerUrl: proxy.url, token: TEST_TOKEN }));
  await vi.waitFor(() => expect(followed.opens).toEqual([false]));
  emitRuns(1, first);
  await vi.waitFor(() => expect(followed.runs).toEqual(ids(1, first)));
  return followed;
}

describe('Client.events()', () => {
  it('reconnects after the stream is dropped and resumes with Last-Event-ID: no gap, no duplicate', async () => {
    const followed = await followingThroughProxy(3);
    proxy!.cut();
    emitRuns(4, 6); // committed while the client is away: the old stream is gone, the new one not open yet
    await vi.waitFor(() => expect(followed.opens).toEqual([false, true]));
    emitRuns(7, 8);
    await vi.waitFor(() => expect(followed.runs).toEqual(ids(1, 8)));
    expect(followed.resets()).toBe(0);
    expect(proxy!.eventRequests).toHaveLength(2);
    expect(proxy!.eventRequests[0]!.lastEventId).toBeUndefined();
    expect(proxy!.eventRequests[1]!.lastEventId).toMatch(/^\d+$/);
  });

  it('surfaces a reset when the runner no longer holds what was missed, then goes on live', async () => {
    const followed = await followingThroughProxy(1, { api: { events: { replayEvents: 3 } } });
    proxy!.cut();
    emitRuns(2, 9); // more than the ring keeps: event 2 is gone from it
    await vi.waitFor(() => expect(followed.resets()).toBe(1));
    expect(followed.runs).toEqual(ids(1, 1)); // nothing replayed: the snapshot is the caller's to read
    emitRuns(10, 10);
    await vi.waitFor(() => expect(followed.runs).toEqual([...ids(1, 1), ...ids(10, 10)]));
  });

  it('answers a Last-Event-ID it cannot place (another process, not a number) with a reset frame', async () => {
    runner = await startTestRunner();
    for (const lastEventId of ['12', 'not-a-number']) {
      const response = await fetch(`${runner.url}/v1/events`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'last-event-id': lastEventId },
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (!text.includes('event: reset')) text += (await reader.read()).value ?? '';
      expect(text).toContain('data: {"type":"reset"}');
      await reader.cancel();
    }
  });

  it('stops with the ClientError when retrying cannot help (a wrong token)', async () => {
    runner = await startTestRunner({ api: { openOnLoopback: false } });
    const done = new Client({ runnerUrl: runner.url, token: 'wrong' }).events({
      onEvent: () => {},
      signal: controller.current.signal,
    });
    await expect(done).rejects.toMatchObject({ name: 'ClientError', status: 401, apiCode: 'UNAUTHORIZED' });
  });
});
