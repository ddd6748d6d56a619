import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProgram } from '../../cli/program.js';
import type { CliIO } from '../../cli/lib/io.js';
import type { WorkflowContext } from '../../serve/index.js';
import { startApp, startTestRunner, startThroughApp, waitForFinish, type TestRunner } from '../helpers/runner.js';

/**
 * `serve(fn, { schema })` against a real runner over real HTTP: a body that fails the schema is
 * refused by the route (400 with issues) and the runner never hears of it; one that passes is stored
 * as the validated JSON, and every drive of the run (replays included) sees that value.
 */

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const order = z.object({
  email: z
    .string()
    .email()
    .transform((e) => e.toLowerCase()),
  items: z.array(z.object({ sku: z.string(), qty: z.number().int().positive() })).min(1),
});

async function setUp(): Promise<{ runner: TestRunner; url: string; seen: unknown[] }> {
  const runner = await startTestRunner();
  closers.push(() => runner.close());
  const seen: unknown[] = [];
  const workflow = async (context: WorkflowContext<z.output<typeof order>>) => {
    seen.push(context.requestPayload);
    const first = await context.run('count', () => context.requestPayload.items.length);
    // A second step, so the run is driven again and the payload is replayed from the stored body.
    await context.sleep('pause', 1);
    return context.run('who', () => `${context.requestPayload.email}:${first}`);
  };
  const app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, schema: order });
  closers.push(() => app.close());
  return { runner, url: app.url, seen };
}

async function runCount(runner: TestRunner): Promise<number> {
  return (await runner.store.listRuns({ limit: 100 })).runs.length;
}

describe('validated payloads on a real runner', () => {
  it('refuses an invalid start with 400 and its issues; the runner starts nothing', async () => {
    const { runner, url, seen } = await setUp();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nope', items: [{ sku: 'a', qty: 0 }] }),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as {
      error: { code: string; message: string; issues: { path: unknown[]; message: string }[] };
    };
    expect(error.code).toBe('VALIDATION');
    expect(error.issues.map((i) => i.path)).toEqual([['email'], ['items', 0, 'qty']]);
    expect(runner.requests.filter((r) => r.startsWith('POST /v1/runs'))).toEqual([]);
    expect(await runCount(runner)).toBe(0);
    expect(seen).toEqual([]);
  });

  it('stores the validated value as the run body; every drive sees it', async () => {
    const { runner, url, seen } = await setUp();
    const runId = await startThroughApp(url, {
      email: 'Ada@Example.COM',
      items: [{ sku: 'a', qty: 2 }],
      note: 'dropped by the schema',
    });
    const { run, steps } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('completed');
    expect(JSON.parse(run.body)).toEqual({ email: 'ada@example.com', items: [{ sku: 'a', qty: 2 }] });
    expect(steps.map((s) => s.name)).toEqual(['count', 'pause', 'who']);
    expect(seen.length).toBeGreaterThanOrEqual(2); // driven more than once: the sleep hands back
    for (const payload of seen) expect(payload).toEqual({ email: 'ada@example.com', items: [{ sku: 'a', qty: 2 }] });
  });

  it('`wf trigger` goes through the route: refused with the issues, or started with the validated body', async () => {
    const { runner, url } = await setUp();
    const out: string[] = [];
    const io: CliIO = {
      out: (l) => void out.push(l),
      err: (l) => void out.push(l),
      env: { WF_RUNNER_URL: runner.url, WF_TOKEN: runner.token },
      cwd: process.cwd(),
      interrupted: () => new Promise(() => {}),
    };
    const trigger = (data: string) =>
      createProgram(io).exitOverride().parseAsync(['trigger', url, '--data', data], { from: 'user' });

    await expect(trigger('{"email":"bo@example.org","items":[]}')).rejects.toThrow(
      /answered 400: .*"code":"VALIDATION".*"path":\["items"\]/,
    );
    expect(await runCount(runner)).toBe(0);

    await trigger('{"email":"Bo@Example.ORG","items":[{"sku":"b","qty":1}]}');
    const runId = out.at(-1)!;
    expect(runId).toMatch(/^wfr_/);
    const { run } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('completed');
    expect(JSON.parse(run.body)).toMatchObject({ email: 'bo@example.org' });
  });
});
