import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Header } from '../../protocol/headers.js';
import { signRequest } from '../../protocol/signing.js';
import type { ServeOptions, Workflow, WorkflowContext } from '../../serve/core/handler.js';
import { MAX_DRIVE_BODY_BYTES } from '../../serve/core/options.js';
import { driveBody, driveRequest, readOutcomes } from '../helpers/drive.js';
import { fakeRunner, postWithHost, type Endpoint, type FakeRunner } from '../helpers/endpoint.js';
import { sendUntilAnswered } from '../helpers/raw-http.js';
import type { Mount } from './conformance-mount.js';

const RUN_ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
const FORGED_HOST = 'attacker.example:8080';

/**
 * Part of the adapter suite: who may choose where the runner sends requests, and what the route
 * refuses before it reads a body or runs a step. Every rule holds on every adapter.
 */
export function describeTrust(mount: Mount): void {
  describe('trust: URL, signature and deadline', () => {
    let runner: FakeRunner;
    const open: Endpoint[] = [];
    beforeEach(async () => {
      runner = await fakeRunner();
    });
    afterEach(async () => {
      vi.unstubAllEnvs();
      vi.restoreAllMocks();
      await Promise.all([...open.splice(0), runner].map((e) => e.close()));
    });

    /** Mounts with the runner double; `options(origin)` says how the route learns its URL. */
    async function mounted(workflow: Workflow<any, any>, options: (origin: string) => ServeOptions): Promise<string> {
      const endpoint = await mount(workflow, (origin) => ({
        runnerUrl: runner.url,
        token: runner.token,
        ...options(origin),
      }));
      open.push(endpoint);
      return endpoint.url;
    }

    function counted(): { workflow: Workflow; calls: { workflow: number; second: number } } {
      const calls = { workflow: 0, second: 0 };
      const workflow = async (context: WorkflowContext): Promise<void> => {
        calls.workflow++;
        await context.run('first', () => 1);
        await context.run('second', () => calls.second++);
      };
      return { workflow, calls };
    }

    const startFrom = (url: string, host: string) => postWithHost(url, host, '{"text":"x"}');
    const errorOf = (text: string) => (JSON.parse(text) as { error: { code: string; message: string } }).error;

    it('starts with its configured URL, never a forged Host', async () => {
      const url = await mounted(counted().workflow, (origin) => ({ baseUrl: origin }));
      expect((await startFrom(url, FORGED_HOST)).status).toBe(200);
      expect(runner.starts.map((s) => s.url)).toEqual([url]);
    });

    it('with allowedHosts, refuses a start from a Host they do not list (403 naming what to set) before asking the runner, and takes a listed one', async () => {
      const url = await mounted(counted().workflow, (origin) => ({ allowedHosts: [new URL(origin).host] }));
      const forged = await startFrom(url, FORGED_HOST);
      expect(forged.status).toBe(403);
      expect(errorOf(forged.text)).toMatchObject({
        code: 'HOST_NOT_ALLOWED',
        message: expect.stringMatching(
          /"attacker\.example:8080" is not one of them.*WF_WORKFLOW_URL=https:\/\/your-app\.example\.com/,
        ),
      });
      expect(runner.starts).toEqual([]);
      expect((await startFrom(url, new URL(url).host)).status).toBe(200);
      expect(runner.starts.map((s) => s.url)).toEqual([url]);
    });

    it("in production with nothing configured, names the request's own URL (the runner decides whether it calls it)", async () => {
      vi.stubEnv('ENVIRONMENT', 'production');
      const url = await mounted(counted().workflow, () => ({}));
      expect((await startFrom(url, new URL(url).host)).status).toBe(200);
      expect((await startFrom(url, FORGED_HOST)).status).toBe(200);
      expect(runner.starts.map((s) => s.url)).toEqual([url, `http://${FORGED_HOST}${new URL(url).pathname}`]);
    });

    it("in production, the platform's statement of the deployment URL wins over any Host", async () => {
      vi.stubEnv('ENVIRONMENT', 'production');
      vi.stubEnv('RENDER_EXTERNAL_URL', 'https://my-app.onrender.com');
      const url = await mounted(counted().workflow, () => ({}));
      expect((await startFrom(url, FORGED_HOST)).status).toBe(200);
      expect(runner.starts.map((s) => s.url)).toEqual([`https://my-app.onrender.com${new URL(url).pathname}`]);
    });

    it('in development with allowedHosts, still takes a loopback Host', async () => {
      vi.stubEnv('ENVIRONMENT', 'development');
      const url = await mounted(counted().workflow, () => ({ allowedHosts: ['app.example.com'] }));
      expect((await startFrom(url, FORGED_HOST)).status).toBe(403);
      expect((await startFrom(url, new URL(url).host)).status).toBe(200);
      expect(runner.starts.map((s) => s.url)).toEqual([url]);
    });

    it('answers 401 to a drive signed for another app and relayed with its Host, and never runs the workflow', async () => {
      const { workflow, calls } = counted();
      const configured = await mounted(workflow, (origin) => ({ baseUrl: origin }));
      const listed = await mounted(workflow, (origin) => ({ allowedHosts: [new URL(origin).host] }));
      for (const url of [configured, listed]) {
        const appA = `http://app-a.example${new URL(url).pathname}`;
        const body = driveBody({ runId: RUN_ID, body: '', steps: [] });
        const relayed = await postWithHost(
          url,
          'app-a.example',
          body,
          await signRequest({ url: appA, body, tokens: [runner.token] }),
        );
        expect(relayed.status).toBe(401);
        expect(errorOf(relayed.text).code).toBe('SIGNATURE');
      }
      expect(calls.workflow).toBe(0);
    });

    it('answers 408 to a late drive, and never runs the workflow', async () => {
      const { workflow, calls } = counted();
      const url = await mounted(workflow, (origin) => ({ baseUrl: origin }));
      const body = driveBody({ runId: RUN_ID, body: '', steps: [] });
      const headers = await signRequest({ url, body, tokens: [runner.token], deadline: Date.now() - 1000 });
      const response = await fetch(url, { method: 'POST', headers, body });
      expect(response.status).toBe(408);
      expect((await response.json()) as unknown).toMatchObject({
        error: { code: 'LATE', message: expect.stringMatching(/^Late request/) },
      });
      expect(calls.workflow).toBe(0);
    });

    it('refuses a request that only claims a signature before reading its body', async () => {
      const { workflow, calls } = counted();
      const url = await mounted(workflow, (origin) => ({ baseUrl: origin }));
      const { host, pathname } = new URL(url);
      const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\n${Header.Signature}: v1,whatever\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
      // 8x the drive cap on offer; a server that read bodies before the headers would take the cap.
      const answer = await sendUntilAnswered(url, head, { chunked: true, limit: 8 * MAX_DRIVE_BODY_BYTES });
      answer.socket.destroy();
      expect(answer.status).toBe(401);
      expect(answer.text).toContain('Unsigned request');
      expect(answer.written).toBeLessThan(MAX_DRIVE_BODY_BYTES);
      expect(calls.workflow).toBe(0);
    });

    it('starts no new step after the signed deadline: the response ends with continue', async () => {
      const deadline = Date.now() + 1_500;
      const calls = { second: 0 };
      const workflow: Workflow = async (context) => {
        // The first step outlives the deadline (bounded: 100 turns of 50 ms at most).
        await context.run('first', async () => {
          for (let i = 0; i < 100 && Date.now() <= deadline; i++)
            await new Promise((resolve) => setTimeout(resolve, 50));
          return 1;
        });
        await context.run('second', () => calls.second++);
      };
      const url = await mounted(workflow, (origin) => ({ baseUrl: origin }));
      const body = driveBody({ runId: RUN_ID, body: '', steps: [] });
      const headers = await signRequest({ url, body, tokens: [runner.token], deadline });
      const lines = await readOutcomes(await fetch(url, { method: 'POST', headers, body }));
      expect(lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t))).toEqual([
        'started:first',
        'step:first',
        'continue',
      ]);
      expect(calls.second).toBe(0);
      // Without a deadline passing, the same workflow runs both steps in one response.
      const again = await readOutcomes(
        await fetch(await driveRequest(url, runner.token, { runId: RUN_ID, body: '', steps: [] })),
      );
      expect(again.at(-1)?.t).toBe('done');
    });
  });
}
