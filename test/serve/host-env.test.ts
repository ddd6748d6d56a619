import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serve as cloudflareServe } from '../../serve/adapters/cloudflare.js';
import { serve as h3Serve } from '../../serve/adapters/h3.js';
import { serve as svelteServe } from '../../serve/adapters/svelte.js';
import { decodeValue } from '../../protocol/values.js';
import type { Workflow } from '../../serve/core/handler.js';
import { driveRequest, readOutcomes } from '../helpers/drive.js';
import { fakeRunner, type FakeRunner } from '../helpers/endpoint.js';

/**
 * Hosts that hand variables over per request (Workers bindings, SvelteKit `platform.env`, Nitro's
 * `context.cloudflare.env`): the adapter passes them on, and the settings come from them.
 */
describe('per-request host variables', () => {
  let runner: FakeRunner;
  const URL_ = 'http://app.test/api/workflow';
  const workflow: Workflow<{ text: string }, Record<string, unknown>> = async (context) =>
    context.run('seen', () => ({ text: context.requestPayload.text, mode: context.env.ENVIRONMENT }));

  beforeEach(async () => {
    vi.stubEnv('WF_TOKEN', '');
    vi.stubEnv('WF_RUNNER_URL', '');
    runner = await fakeRunner();
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await runner.close();
  });

  const start = (): Request => new Request(URL_, { method: 'POST', body: '{"text":"hi"}' });
  // WF_ALLOWED_HOSTS from the bindings lets the route take its URL from the request's host.
  const bindings = (): Record<string, unknown> => ({
    WF_TOKEN: runner.token,
    WF_RUNNER_URL: runner.url,
    ENVIRONMENT: 'development',
    WF_ALLOWED_HOSTS: 'app.test',
  });

  it('cloudflare: reads token and runner from the bindings, and hands waitUntil over', async () => {
    const fetch = cloudflareServe(workflow);
    const waitUntil = vi.fn();
    const response = await fetch(start(), bindings() as never, { waitUntil });
    expect(response.status).toBe(200);
    expect(runner.starts).toEqual([expect.objectContaining({ url: URL_, body: '{"text":"hi"}' })]);

    const drive = await fetch(
      await driveRequest(URL_, runner.token, { runId: 'wfr_ENV', body: '{"text":"hi"}', steps: [] }),
      bindings() as never,
    );
    const lines = await readOutcomes(drive);
    expect(lines[1]?.t).toBe('step');
    expect(decodeValue((lines[1] as { output?: string }).output)).toEqual({ text: 'hi', mode: 'development' });
  });

  it('cloudflare: without bindings or options, answers 500 naming WF_TOKEN and .dev.vars', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const response = await cloudflareServe(workflow)(start(), {} as never);
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('.dev.vars');
  });

  it('svelte: reads platform.env (adapter-cloudflare)', async () => {
    const POST = svelteServe(workflow);
    const response = await POST({ request: start(), platform: { env: bindings() } });
    expect(response.status).toBe(200);
    expect(runner.starts).toHaveLength(1);
  });

  it('svelte: reads the env option ($app/env/private)', async () => {
    const POST = svelteServe(workflow, {
      env: { WF_TOKEN: runner.token, WF_RUNNER_URL: runner.url, WF_ALLOWED_HOSTS: 'other.test, app.test' },
    });
    expect((await POST({ request: start() })).status).toBe(200);
    expect(runner.starts).toHaveLength(1);
  });

  it('h3: reads context.cloudflare.env (Nitro on Workers)', async () => {
    const handler = h3Serve(workflow);
    const response = await handler({ req: start(), context: { cloudflare: { env: bindings() } } });
    expect(response.status).toBe(200);
    expect(runner.starts).toHaveLength(1);
  });

  it('refuses a start from a host the bindings do not allow (403), naming what to set', async () => {
    const response = await cloudflareServe(workflow)(start(), {
      ...bindings(),
      WF_ALLOWED_HOSTS: 'other.test',
    } as never);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /WF_ALLOWED_HOSTS.*"app\.test" is not one of them.*WF_WORKFLOW_URL=https:\/\/your-app\.example\.com/,
    );
    expect(runner.starts).toEqual([]);
  });

  it('cloudflare: a platform URL variable in the bindings names the origin, over the request host', async () => {
    const response = await cloudflareServe(workflow)(start(), {
      ...bindings(),
      WF_ALLOWED_HOSTS: '',
      RENDER_EXTERNAL_URL: 'https://from-bindings.example',
    } as never);
    expect(response.status).toBe(200);
    expect(runner.starts.map((s) => s.url)).toEqual(['https://from-bindings.example/api/workflow']);
  });

  it('h3: refuses something that is not an h3 event, naming both shapes', async () => {
    await expect(h3Serve(workflow)({})).rejects.toThrow(/`req` \(h3 v2\) or `node.req` \(h3 v1\)/);
  });
});
