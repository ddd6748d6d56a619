import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT, TENANT_HEADER, type FidelityState } from './fixtures/fidelity-workflows.js';
import { stepOutputs, waitForRunView, type RunView } from './runner-api.js';
import { startEcho, type Echo, type UpstashHarness } from './scenarios.js';

/**
 * Issue 21's details, each one a thing real Upstash apps rely on, run by the real SDK on the Hono
 * app (fixtures/fidelity.ts), the Next.js app and the Cloudflare Worker (frameworks/hosts.ts), all
 * serving fixtures/fidelity-workflows.ts, against one runner: a call's answer, a wait's end and an invoked child's
 * result carry the run's headers (1); a call's target gets the call, not the SDK's control headers
 * (2); a call's answer header names come as QStash gives them (3); a failed child gives its invoker
 * no body (6); a delivery's successor, and a wait's end sent to the run meanwhile, wait for its answer (12).
 */

export function describeUpstashFidelity(label: string, harness: () => UpstashHarness): void {
  describe(`${label}: QStash's details real apps rely on`, () => {
    let h: UpstashHarness;
    let client: Client;
    // A call target that names its answer's headers in lower case, as a fetch-based server (Hono,
    // Next.js) or an HTTP/2 proxy does.
    let target: Echo;
    const finished = (id: string, timeoutMs = 30_000): Promise<RunView> =>
      waitForRunView(h.runnerUrl, h.token, id, timeoutMs, h.app.output);
    const state = async (): Promise<FidelityState> =>
      (await (await fetch(`${h.app.url}/fidelity/state`)).json()) as FidelityState;
    const output = (view: RunView, step: string): unknown => stepOutputs(view).find(([name]) => name === step)?.[1];

    beforeAll(async () => {
      h = harness();
      client = new Client({ baseUrl: h.runnerUrl, token: h.token });
      target = await startEcho({ 'get-header': 'get-header-value-FOO' });
    });
    afterAll(async () => target?.close());

    it("an app that authorizes every request on a header gets it on a call's answer, a wait's end and invoke results; a failed child gives no body", async () => {
      const url = `${h.app.url}/fidelity/guarded/guarded-parent`;
      const { workflowRunId } = await client.trigger({
        url,
        body: { url: target.url },
        headers: { [TENANT_HEADER]: TENANT },
      });
      const view = await finished(workflowRunId, 60_000);
      const refused = (await state()).refused;
      expect(view.run.status, `${JSON.stringify(view.run.error)}; refused: ${refused.join(', ')}`).toBe('completed');
      const summary = output(view, 'summary') as { calledChild: { runId: string } };
      expect(summary).toEqual({
        callStatus: 200,
        calledChild: { status: 200, runId: expect.stringMatching(/^wfr_/) },
        waitTimedOut: true,
        child: { body: 42, isFailed: false },
        // QStash gives a failed child's invoker no body (not the child's error message).
        failed: { hasBody: false, isFailed: true, isCanceled: false },
      });
      expect(refused.filter((path) => path.endsWith('/guarded-parent'))).toEqual([]);
      // The run the call started, a run of the guarded child, completes: the call carried the tenant.
      const called = await finished(summary.calledChild.runId);
      expect(called.run.status, JSON.stringify(called.run.error)).toBe('completed');
      expect(output(called, 'double')).toBe(10);
    });

    it("a call's target gets the call's headers and body, no workflow control headers; the answer's header names come canonical", async () => {
      const seen = target.requests.length;
      const { workflowRunId } = await client.trigger({
        url: `${h.app.url}/fidelity/call-headers`,
        body: { url: target.url },
      });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      // The target wrote `get-header` and `content-type`; the app reads them as QStash gives them.
      expect(output(view, 'read-headers')).toEqual({
        status: 200,
        getHeader: 'get-header-value-FOO',
        contentType: 'application/json',
      });
      const [request] = target.requests.slice(seen);
      expect(request?.body).toBe('{"ping":"headers"}');
      expect(request?.headers).toMatchObject({
        'x-proof': 'fidelity',
        'upstash-message-id': expect.any(String),
        'upstash-signature': expect.any(String),
      });
      const names = Object.keys(request?.headers ?? {});
      expect(
        names.filter(
          (name) =>
            name.startsWith('upstash-workflow-') ||
            name.startsWith('upstash-forward-') ||
            name.startsWith('upstash-callback'),
        ),
      ).toEqual([]);
    });

    it('a call whose target is another workflow endpoint starts a run there, which completes', async () => {
      const { workflowRunId } = await client.trigger({
        url: `${h.app.url}/fidelity/call-workflow`,
        body: { target: h.app.workflowUrl('two-steps') },
      });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const started = output(view, 'started') as { status: number; runId: string | null; body: unknown };
      // What the target's SDK answers a first request: the id of the run it started.
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const otherId = started.runId!;
      expect(otherId, JSON.stringify(started.body)).toMatch(/^wfr_/);
      const other = await finished(otherId);
      expect(other.run.status, JSON.stringify(other.run.error)).toBe('completed');
      expect(output(other, 'upper')).toBe('CALLED');
    });

    it("a delivery's successor (and a wait's end notified meanwhile) is sent only once its answer is complete: middleware that logs after the handler never sees two at once", async () => {
      const { workflowRunId } = await client.trigger({
        url: `${h.app.url}/fidelity/ordered`,
        body: { url: target.url },
      });
      const view = await finished(workflowRunId);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      expect(output(view, 'three')).toBe(203);
      const { deliveries, overlaps } = await state();
      // The first, one, the notify, the wait's end (published while the wait's delivery was in progress),
      // two, the call's answer, three (each published while the previous was answered).
      expect(deliveries[workflowRunId]).toBeGreaterThanOrEqual(7);
      expect(overlaps[workflowRunId] ?? 0).toBe(0);
    });
  });
}
