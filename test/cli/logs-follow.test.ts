import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { startLocalRunner } from '../../cli/lib/local-runner.js';
import { createProgram } from '../../cli/program.js';
import { serve } from '../../serve/adapters/node.js';
import { cuttingProxy } from '../helpers/cutting-proxy.js';

/**
 * `wf logs --follow` when the runner drops its event stream (it restarted, or the reader fell a
 * buffer behind): it reconnects, reads the run again, prints only what it missed, once.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function captureIO(cwd: string): { io: CliIO; out: string[]; interrupt: () => void } {
  const out: string[] = [];
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  return {
    io: { out: (line) => void out.push(line), err: () => {}, env: {}, cwd, interrupted: () => interrupted },
    out,
    interrupt,
  };
}

describe('wf logs --follow across a dropped event stream', () => {
  it('reconnects, prints what it missed once, and ends with the run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-logs-follow-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const local = await startLocalRunner({ dbPath: join(dir, 'dev.db'), host: '127.0.0.1', port: 0, tokens: ['T'] });
    cleanups.push(() => local.close());
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    cleanups.push(() => openGate());
    // The route is told its public URL (a deployed route must be): the listening address.
    let route: ReturnType<typeof serve> = async () => {};
    const app = createServer((req, res) => void route(req, res));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (app.closeAllConnections(), app.close(() => resolve()))));
    const port = (app.address() as { port: number }).port;
    route = serve<{ text: string }>(
      async (context) => {
        await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
        await context.run('second-step', async () => (await gate, 2));
      },
      { token: 'T', runnerUrl: local.url, baseUrl: `http://127.0.0.1:${port}` },
    );
    const proxy = await cuttingProxy(local.url);
    cleanups.push(() => proxy.close());

    const started = await fetch(`http://127.0.0.1:${port}/workflow`, { method: 'POST', body: '{"text":"hi"}' });
    const { workflowRunId: id } = (await started.json()) as { workflowRunId: string };

    const { io, out, interrupt } = captureIO(dir);
    cleanups.push(interrupt);
    let settled = false;
    const following = createProgram(io)
      .exitOverride()
      .parseAsync(['logs', id, '--follow', '--runner', proxy.url, '--token', 'T'], { from: 'user' })
      .finally(() => (settled = true));
    await vi.waitFor(() => expect(out.join('\n')).toContain('step 0 initial-step succeeded'));
    expect(proxy.eventRequests.map((r) => r.url)).toEqual([`/v1/events?bodies=1&runId=${id}`]);

    // The stream drops; the run finishes while the follower is away.
    proxy.cut();
    openGate();
    await vi.waitFor(async () => expect((await local.runner.store.getRun(id))?.status).toBe('completed'));
    await vi.waitFor(() => expect(settled).toBe(true), { timeout: 10_000 });
    await following;
    expect(proxy.eventRequests).toHaveLength(2);
    const text = out.join('\n');
    expect(text.match(/step 1 second-step succeeded/g)).toHaveLength(1);
    expect(text.match(/step 0 initial-step succeeded/g)).toHaveLength(1);
    expect(text).toContain('run completed');
    expect(out.at(-1)).toBe('(run finished)');
  });
});
