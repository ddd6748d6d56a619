import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Workflow } from '../../serve/core/handler.js';
import { postWithHost } from '../helpers/endpoint.js';
import { closeServer, closeStarted, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import type { Mount, Mounted } from './conformance-mount.js';

/** A listener on another loopback address (127.0.0.2): the origin a forged Host names. It must see nothing. */
async function forgedOrigin(): Promise<{ host: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.2', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return { host: `127.0.0.2:${port}`, seen, close: () => closeServer(server) };
}

const errorOf = (text: string) => (JSON.parse(text) as { error: { code: string; message: string } }).error;

/**
 * Part of the adapter suite: deployed as the service's guide says, with no URL configured at all
 * (no `baseUrl`, no WF_WORKFLOW_URL, production mode), against a real runner whose operator allowed
 * the app's origin. A start answers a run id and the run completes; a start with a forged Host is
 * refused by the runner (the lock), handed on as 403, and nothing reaches the forged origin.
 */
export function describeDeploy(mount: Mount): void {
  describe('deployed: no URL configured, the runner allows the app origin', () => {
    let runner: TestRunner;
    let app: Mounted;
    let forged: Awaited<ReturnType<typeof forgedOrigin>>;
    const workflow: Workflow<{ text: string }> = async (context) => {
      const upper = await context.run('upper', () => context.requestPayload.text.toUpperCase());
      return context.run('length', () => upper.length);
    };

    beforeEach(async () => {
      vi.stubEnv('ENVIRONMENT', 'production');
      vi.stubEnv('WF_WORKFLOW_URL', '');
      vi.stubEnv('WF_ALLOWED_HOSTS', '');
      runner = await startTestRunner({ runner: { allowedOrigins: [] } });
      app = await mount(workflow, () => ({ runnerUrl: runner.url, token: runner.token }));
      runner.runner.allowOrigin(new URL(app.url).origin);
      forged = await forgedOrigin();
    });
    afterEach(async () => {
      vi.unstubAllEnvs();
      await closeStarted();
      await Promise.all([app.close(), forged.close()]);
    });

    it('a start answers a run id, the runner drives the route at its own URL and the run completes', async () => {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text":"hello"}',
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      const { workflowRunId } = JSON.parse(text) as { workflowRunId: string };
      const { run } = await waitForFinish(runner.runner, workflowRunId);
      expect(run).toMatchObject({ status: 'completed', url: app.url });
    });

    it('a start with a forged Host is refused 403 ORIGIN_NOT_ALLOWED naming the origin; no run, and nothing reaches that origin', async () => {
      const answer = await postWithHost(app.url, forged.host, '{"text":"hello"}');
      expect(answer.status).toBe(403);
      const error = errorOf(answer.text);
      expect(error.code).toBe('ORIGIN_NOT_ALLOWED');
      expect(error.message).toContain(
        `The runner does not call http://${forged.host} (from the request's Host header)`,
      );
      expect(error.message).toContain(`--allow-origin http://${forged.host}`);
      // The runner refused before creating anything: no run exists that could ever be driven there.
      expect((await runner.store.listRuns({ limit: 10 })).runs).toEqual([]);
      expect(forged.seen).toEqual([]);
    });
  });
}
