import { describe, expect, it } from 'vitest';
import type { Runner } from '../../runner-core/runner.js';

/**
 * Finding 6 of issue 19: an invoke request (`Upstash-Workflow-Invoke: true` on a run's first
 * message) names its invoker, whose step row the child's start writes. Naming a native run wrote a
 * step into it; naming no run answered 500 and left the child running. The invoker must be an open
 * QStash run, else a 4xx, and nothing is written: no child, no step row.
 */

export interface InvokeTarget {
  runner: Runner;
  /** The runner's API, `http://127.0.0.1:<port>`. */
  url: string;
  token: string;
}

const APP = 'http://127.0.0.1:9';
let ids = 0;
const runId = (name: string): string => `wfr_${name}_${process.pid}_${++ids}`;

async function publish(
  target: InvokeTarget,
  destination: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${target.url}/v2/publish/${destination}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, text: await response.text() };
}

/** The child's first message as `context.invoke` publishes it, naming `invoker`'s step 2. */
function invoke(target: InvokeTarget, invoker: string, child: string, body?: string) {
  const request =
    body ??
    JSON.stringify({
      body: '"payload"',
      headers: {},
      workflowRunId: invoker,
      workflowUrl: `${APP}/parent`,
      step: { stepId: 2, stepName: 'invoke the child', stepType: 'Invoke', concurrent: 1 },
    });
  return publish(
    target,
    `${APP}/child`,
    {
      'upstash-workflow-runid': child,
      'upstash-workflow-init': 'true',
      'upstash-workflow-url': `${APP}/child`,
      'upstash-workflow-invoke': 'true',
    },
    request,
  );
}

/** A QStash run, started as `Client.trigger` starts one. */
async function startUpstashRun(target: InvokeTarget, id: string): Promise<void> {
  const started = await publish(
    target,
    `${APP}/parent`,
    { 'upstash-workflow-runid': id, 'upstash-workflow-init': 'true', 'upstash-workflow-url': `${APP}/parent` },
    '{}',
  );
  expect(started.status, started.text).toBe(201);
}

export function describeInvokeRefusals(name: string, open: () => Promise<InvokeTarget>): void {
  describe(`invoke requests name an open QStash run as invoker (${name})`, () => {
    it('refuses a native run as invoker with 409: no child run, no step row in the native run', async () => {
      const target = await open();
      const native = runId('native');
      await target.runner.store.createRun({
        id: native,
        url: `${APP}/native`,
        body: '{}',
        headers: {},
        retries: 0,
        retryDelayMs: 1000,
        now: Date.now(),
        delayMs: 3_600_000,
      });
      const child = runId('child');
      const answer = await invoke(target, native, child);
      expect(answer.status, answer.text).toBe(409);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'INVOKER_NOT_QSTASH' } });
      expect(await target.runner.store.getRun(child)).toBeUndefined();
      expect(await target.runner.store.listSteps(native)).toEqual([]);
    });

    it('refuses an invoker that does not exist with 404, and leaves no orphan child', async () => {
      const target = await open();
      const child = runId('child');
      const answer = await invoke(target, runId('nobody'), child);
      expect(answer.status, answer.text).toBe(404);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'INVOKER_NOT_FOUND' } });
      expect(await target.runner.store.getRun(child)).toBeUndefined();
    });

    it('refuses a finished invoker with 400 (the SDK stops there) and a body that names no invoker with 400', async () => {
      const target = await open();
      const parent = runId('parent');
      await startUpstashRun(target, parent);
      const cancelled = await fetch(`${target.url}/v2/workflows/runs/${parent}?cancel=true`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${target.token}` },
      });
      expect(cancelled.status).toBe(200);
      const child = runId('child');
      const late = await invoke(target, parent, child);
      expect(late.status, late.text).toBe(400);
      const garbled = await invoke(target, parent, child, '{"body":"x"}');
      expect(garbled.status, garbled.text).toBe(400);
      expect(await target.runner.store.getRun(child)).toBeUndefined();
    });

    it("starts the child of an open QStash invoker and marks the invoker's step as invoking it", async () => {
      const target = await open();
      const parent = runId('parent');
      await startUpstashRun(target, parent);
      const child = runId('child');
      const answer = await invoke(target, parent, child);
      expect(answer.status, answer.text).toBe(201);
      expect(await target.runner.store.getRun(child)).toMatchObject({ status: 'running', protocol: 'upstash' });
      expect(await target.runner.store.listSteps(parent)).toMatchObject([
        { index: 2, kind: 'invoke', status: 'running' },
      ]);
      await fetch(`${target.url}/v2/workflows/runs/${parent}?cancel=true`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${target.token}` },
      });
    });
  });
}
