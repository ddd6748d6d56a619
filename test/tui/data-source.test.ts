import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../api/events.js';
import { httpDataSource } from '../../tui/data-source.js';
import { TEST_TOKEN, startTestRunner, type TestRunner } from '../helpers/runner.js';
import { makeRun, storedRun } from './fixtures.js';

/** The TUI's data source against a real runner: slim events, and a stream the runner drops. */

let runner: TestRunner | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  await runner?.close();
  runner = stop = undefined;
});

describe('httpDataSource', () => {
  it('opens the stream again when the runner drops it (as at its buffer cap), saying so each time', async () => {
    runner = await startTestRunner({ api: { openOnLoopback: false } });
    const streams: ServerResponse[] = [];
    runner.server.on(
      'request',
      (req, res: ServerResponse) => void (req.url?.startsWith('/v1/events') && streams.push(res)),
    );
    const events: StreamEvent[] = [];
    const closed: Error[] = [];
    let opens = 0;
    stop = httpDataSource({ url: runner.url, token: TEST_TOKEN, retryMs: 20 }).subscribe({
      event: (e) => events.push(e),
      open: () => opens++,
      closed: (e) => closed.push(e),
    });
    await vi.waitFor(() => expect(opens).toBe(1));

    streams[0]!.destroy(); // what the runner does to a reader a buffer behind
    await vi.waitFor(() => expect(opens).toBe(2));
    expect(closed).toHaveLength(1);
    const run = makeRun(7);
    runner.runner.events.emit({ type: 'run', run: storedRun(run) });
    await vi.waitFor(() => expect(events).toHaveLength(1));
    expect(events[0]).toMatchObject({ type: 'run', slim: true, run: { id: run.id, status: run.status } });
    expect(events[0]).not.toHaveProperty('run.body');
  });

  it('asks for whole events with `bodies`', async () => {
    runner = await startTestRunner();
    const events: StreamEvent[] = [];
    let opens = 0;
    stop = httpDataSource({ url: runner.url, bodies: true }).subscribe({
      event: (e) => events.push(e),
      open: () => opens++,
      closed: () => {},
    });
    await vi.waitFor(() => expect(opens).toBe(1));
    const run = makeRun(8);
    runner.runner.events.emit({ type: 'run', run: storedRun(run) });
    await vi.waitFor(() => expect(events).toEqual([{ type: 'run', run: { ...run, outputEncoded: null } }]));
  });
});
