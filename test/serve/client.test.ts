import { afterEach, describe, expect, it } from 'vitest';
import { Client, ClientError } from '../../serve/client.js';
import { encodeValue } from '../../protocol/values.js';
import {
  TEST_TOKEN,
  startApp,
  startTestRunner,
  waitForFinish,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** The one Client against a real runner (real HTTP on 127.0.0.1, real SQLite): every request method. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  await runner?.close();
  runner = app = undefined;
});

async function setUp(workflow: Parameters<typeof startApp>[0]): Promise<{ client: Client; url: string }> {
  runner = await startTestRunner({ api: { openOnLoopback: false } });
  app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, retryDelay: 10 });
  return { client: new Client({ runnerUrl: runner.url, token: TEST_TOKEN }), url: app.url };
}

describe('Client', () => {
  it('triggers a run, gets it with steps and attempts, lists it, reads its logs', async () => {
    const { client, url } = await setUp(async (context) =>
      context.run('double', () => (context.requestPayload as { n: number }).n * 2),
    );
    const { workflowRunId } = await client.trigger({ url, body: { n: 21 }, idempotencyKey: 'k-1' });
    expect(await client.trigger({ url, body: { n: 21 }, idempotencyKey: 'k-1' })).toEqual({ workflowRunId });
    await waitForFinish(runner!.runner, workflowRunId);

    const detail = await client.get(workflowRunId);
    expect(detail.run).toMatchObject({
      id: workflowRunId,
      status: 'completed',
      output: 42,
      outputEncoded: encodeValue(42, 'test'),
      body: '{"n":21}',
    });
    expect(detail.steps).toMatchObject([
      { index: 0, name: 'double', status: 'succeeded', output: 42, outputEncoded: '[42]' },
    ]);
    expect(detail.attempts.length).toBeGreaterThan(0);
    expect(await client.logs(workflowRunId)).toEqual(detail.attempts);

    const page = await client.list({ status: 'completed', limit: 5 });
    expect(page.runs.map((r) => r.id)).toEqual([workflowRunId]);
    expect(page.nextCursor).toBeNull();
    expect((await client.list({ status: 'failed' })).runs).toEqual([]);
  });

  it('cancels a waiting run, reruns it, and notifies a waiting step', async () => {
    const { client, url } = await setUp(async (context) => {
      const { eventData } = await context.waitForEvent<{ paid: number }>(
        'paid',
        `order-${(context.requestPayload as { id: number }).id}`,
        { timeout: '1h' },
      );
      return eventData;
    });
    const first = (await client.trigger({ url, body: { id: 1 } })).workflowRunId;
    await waitForRun(runner!.runner, first, (r) => r.status === 'waiting');
    const cancelled = await client.cancel(first);
    expect(cancelled).toMatchObject({ id: first, status: 'cancelled' });

    const again = await client.rerun(first);
    expect(again.id).not.toBe(first);
    expect(again.body).toBe('{"id":1}');
    await waitForRun(runner!.runner, again.id, (r) => r.status === 'waiting');
    expect(await client.notify('order-1', { paid: 10 })).toEqual({ delivered: [again.id], kept: false });
    await waitForFinish(runner!.runner, again.id);
    expect((await client.get(again.id)).run).toMatchObject({ status: 'completed', output: { paid: 10 } });
    expect(await client.notify('nobody-waits', 1)).toEqual({ delivered: [], kept: true });
  });

  it('fails with one ClientError: the runner’s status, code and words, or UNREACHABLE', async () => {
    const { client } = await setUp(async () => undefined);
    const missing = await client.get('wfr_00000000000000000000000000').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ClientError);
    expect(missing).toMatchObject({
      status: 404,
      apiCode: 'NOT_FOUND',
      runnerMessage: 'No run with id wfr_00000000000000000000000000.',
    });
    expect((missing as Error).message).toBe(
      'The runner answered GET /v1/runs/wfr_00000000000000000000000000 with 404: No run with id wfr_00000000000000000000000000.',
    );

    const unauthorized = await new Client({ runnerUrl: runner!.url, token: 'wrong' })
      .list()
      .catch((error: unknown) => error);
    expect(unauthorized).toMatchObject({ status: 401, apiCode: 'UNAUTHORIZED' });

    const { url } = runner!;
    await runner!.close();
    const unreachable = await client.list().catch((error: unknown) => error);
    expect(unreachable).toBeInstanceOf(ClientError);
    expect(unreachable).toMatchObject({ status: 0, apiCode: 'UNREACHABLE' });
    expect((unreachable as Error).message).toContain(`Cannot reach the wfkit runner at ${url} (GET /v1/runs)`);
  });

  it('refuses an answer that breaks the contract, naming the field', async () => {
    const fake =
      (body: unknown): typeof fetch =>
      async () =>
        new Response(JSON.stringify(body), { status: 200 });
    const client = (body: unknown): Client =>
      new Client({ runnerUrl: 'http://runner.test', token: 't', fetch: fake(body) });
    const error = await client({ runs: [{ id: 1 }], nextCursor: null })
      .list()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 200, apiCode: 'BAD_ANSWER' });
    expect((error as Error).message).toBe(
      "The runner's answer broke the API contract: Expected `id` in `runs[0]` of the answer to GET /v1/runs to be a string, got number 1.",
    );
    await expect(client({ workflowRunId: null }).trigger({ url: 'http://app.test/w' })).rejects.toThrow(
      'Expected `workflowRunId` in the answer to POST /v1/runs to be a string, got null.',
    );
  });
});

describe('readable values over real HTTP', () => {
  const values: Array<[string, unknown, unknown]> = [
    // [what, returned by the step, `output` in the API (undefined: absent)]
    ['a number', 42, 42],
    ['an object', { a: [1, 'two', null], b: { c: true } }, { a: [1, 'two', null], b: { c: true } }],
    ['a Date', new Date('2026-01-02T03:04:05.000Z'), undefined],
    ['a Map', new Map([['k', 1]]), undefined],
    ['a BigInt', 10n ** 20n, undefined],
  ];

  it.each(values)(
    '%s: `output` is the JSON value when JSON keeps it, `outputEncoded` always the faithful devalue text',
    async (_what, value, json) => {
      const { client, url } = await setUp(async (context) => context.run('value', () => value));
      const { workflowRunId } = await client.trigger({ url });
      await waitForFinish(runner!.runner, workflowRunId);
      // Raw JSON, as curl sees it: no client parsing in between.
      const raw = (await (
        await fetch(`${runner!.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } })
      ).json()) as {
        run: Record<string, unknown>;
        steps: Array<Record<string, unknown>>;
      };
      for (const holder of [raw.run, raw.steps[0]!]) {
        expect(holder.outputEncoded).toBe(encodeValue(value, 'test'));
        if (json === undefined) expect(holder).not.toHaveProperty('output');
        else expect(holder.output).toEqual(json);
      }
      const listed = (await client.list()).runs[0]!;
      expect(listed.outputEncoded).toBe(encodeValue(value, 'test'));
      expect(listed.output).toEqual(json);
    },
  );
});
