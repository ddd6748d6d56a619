import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForRunView } from './runner-api.js';
import type { UpstashHarness } from './scenarios.js';

/**
 * `context.createWebhook` / `waitForWebhook` by the real SDK (fixtures/workflows.ts `webhook`): the
 * URL the runner serves, the request the workflow gets back, the timeout, and what the URL answers
 * anyone who did not get it from the run.
 */

interface Caller {
  url: string;
  /** Statuses the webhook URL answered the caller. */
  answers: number[];
  close: () => Promise<void>;
}

/** A third party that, asked with `{webhookUrl}`, calls it at once (before answering), as Upstash's own CI caller does. */
async function startCaller(): Promise<Caller> {
  const answers: number[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      void (async () => {
        const { webhookUrl } = JSON.parse(body) as { webhookUrl: string };
        const response = await fetch(webhookUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-test-header': 'hook-value',
            authorization: 'Bearer caller-secret',
          },
          body: JSON.stringify({ test: 'webhook-body' }),
        });
        await response.text();
        answers.push(response.status);
        res.writeHead(response.ok ? 200 : 500).end();
      })().catch(() => res.writeHead(500).end());
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/caller`,
    answers,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

export function describeUpstashWebhooks(label: string, harness: () => UpstashHarness): void {
  describe(`${label}: webhooks of an unchanged @upstash/workflow app`, () => {
    let h: UpstashHarness;
    let caller: Caller;
    beforeAll(async () => {
      h = harness();
      caller = await startCaller();
    });
    afterAll(async () => caller?.close());

    it('createWebhook + waitForWebhook: an unused one times out; a called one hands the workflow the request, even called before the wait', async () => {
      const client = new Client({ baseUrl: h.runnerUrl, token: h.token });
      const { workflowRunId } = await client.trigger({
        url: h.app.workflowUrl('webhook'),
        body: { callerUrl: caller.url },
      });
      const view = await waitForRunView(h.runnerUrl, h.token, workflowRunId, 40_000, h.app.output);
      expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
      const result = view.steps.find((s) => s.name === 'after-hook')?.output as Record<string, unknown>;
      const webhookUrl = result.webhookUrl as string;
      // The SDK builds the URL from QSTASH_URL; the event id in it is the SDK's random one.
      expect(webhookUrl).toMatch(new RegExp(`/v2/workflows/hooks/[^/]+/${workflowRunId}/evt_[A-Za-z0-9_-]{15}$`));
      expect(result).toEqual({
        missed: { timeout: true, request: 'none' },
        timeout: false,
        webhookUrl,
        url: webhookUrl,
        method: 'POST',
        header: 'hook-value',
        authorization: 'Bearer caller-secret',
        body: { test: 'webhook-body' },
      });
      // The runner's row of the wait shows the request, the caller's credentials redacted.
      const wait = view.steps.find((s) => s.name === 'wait-hook')?.output as {
        eventData: { method: string; header: Record<string, string[]> };
        timeout: boolean;
      };
      expect(wait).toMatchObject({
        timeout: false,
        eventData: { method: 'POST', header: { 'x-test-header': ['hook-value'], authorization: ['[redacted]'] } },
      });
      expect(caller.answers.at(-1)).toBe(200);
      expect(await h.app.countersOf(workflowRunId)).toEqual({ 'after-hook': 1 });

      // The run has ended: its URL is no webhook any more; a made-up one never was. Neither is a 5xx.
      const hookBase = webhookUrl.slice(0, webhookUrl.indexOf('/v2/'));
      const [userId, , eventId] = webhookUrl.slice(webhookUrl.indexOf('/hooks/') + 7).split('/') as [
        string,
        string,
        string,
      ];
      for (const url of [
        webhookUrl,
        `${hookBase}/v2/workflows/hooks/${userId}/${workflowRunId}/evt_guessedguessed1`,
        `${hookBase}/v2/workflows/hooks/other/${workflowRunId}/${eventId}`,
        `${hookBase}/v2/workflows/hooks/${userId}/wfr_nosuchrun/${eventId}`,
        `${hookBase}/v2/workflows/hooks/${userId}/${workflowRunId}`,
        `${hookBase}/v2/workflows/hooks/%zz/%zz/%zz`,
      ]) {
        const response = await fetch(url, { method: 'POST', body: 'x' });
        expect(response.status, url).toBe(404);
        expect(await response.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
      }
    });
  });
}
