import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Header } from '../../protocol/headers.js';
import type { Outcome } from '../../protocol/outcome.js';
import { signRequest } from '../../protocol/signing.js';
import { decodeValue } from '../../protocol/values.js';
import type { ServeOptions, Workflow, WorkflowContext } from '../../serve/core/handler.js';
import { committedStep, driveBody, driveRequest, readOutcomes } from '../helpers/drive.js';
import { fakeRunner, unusedUrl, type Endpoint, type FakeRunner } from '../helpers/endpoint.js';
import { describeDeploy } from './conformance-deploy.js';
import type { Mount } from './conformance-mount.js';
import { describeSchema } from './conformance-schema.js';
import { describeTrust } from './conformance-trust.js';

const RUN_ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
const RUN_ID_PATTERN = /^wfr_[0-9A-Z]{26}$/;

async function errorBody(response: Response): Promise<{ code: string; message: string }> {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

const lineKinds = (lines: Outcome[]): string[] => lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t));

/** The decoded value a step or done line carries (values travel devalue-encoded). */
const carriedValue = (line: Outcome | undefined): unknown =>
  decodeValue(line && 'output' in line ? line.output : undefined);

/**
 * The one suite every adapter passes (inngest `testFramework` style): start, drive, refusals,
 * all over real HTTP against a test double of the runner.
 */
/** `socketlessMount`: the mount answers through `handle`, without a port. */
export function describeAdapter(name: string, mount: Mount, socketlessMount = false): void {
  describe(`adapter: ${name}`, () => {
    let runner: FakeRunner;
    const open: Endpoint[] = [];
    // Socketless routes by origin: a request for one goes to its handler, any other over HTTP.
    const socketless = new Map<string, (request: Request) => Promise<Response>>();

    /** `fetch`, or the socketless route's handler when the URL names one. */
    function send(input: string | Request, init?: RequestInit): Promise<Response> {
      const request = new Request(input, init);
      const handle = socketless.get(new URL(request.url).origin);
      return handle ? handle(request) : fetch(request);
    }

    beforeEach(async () => {
      runner = await fakeRunner();
    });

    afterEach(async () => {
      vi.unstubAllEnvs();
      vi.restoreAllMocks();
      socketless.clear();
      await Promise.all([...open.splice(0), runner].map((e) => e.close()));
    });

    /** Mounts with the runner double's URL and token, and its own origin as `baseUrl`, unless the options say otherwise. */
    async function mounted(workflow: Workflow<any, any>, options: ServeOptions = {}): Promise<string> {
      const endpoint = await mount(workflow, (origin) => ({
        runnerUrl: runner.url,
        token: runner.token,
        baseUrl: origin,
        ...options,
      }));
      open.push(endpoint);
      if (endpoint.handle) socketless.set(new URL(endpoint.url).origin, endpoint.handle);
      return endpoint.url;
    }

    function start(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
      return send(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    }

    async function driveFetch(url: string, init: Parameters<typeof driveRequest>[2]): Promise<Response> {
      return send(await driveRequest(url, runner.token, init));
    }

    /** Two steps; the second returns what it saw of the first. Counts calls of each. */
    function twoSteps(): {
      workflow: Workflow<{ text: string }>;
      calls: { workflow: number; first: number; second: number };
    } {
      const calls = { workflow: 0, first: 0, second: 0 };
      const workflow = async (context: WorkflowContext<{ text: string }>): Promise<unknown> => {
        calls.workflow++;
        const upper = await context.run('initial-step', () => {
          calls.first++;
          return context.requestPayload.text.toUpperCase();
        });
        const seen = await context.run('second-step', async () => {
          calls.second++;
          return { saw: upper, length: upper.length };
        });
        return { runId: context.workflowRunId, seen };
      };
      return { workflow, calls };
    }

    it('answers 405 with Allow: POST to a GET', async () => {
      const url = await mounted(twoSteps().workflow);
      const response = await send(url);
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await errorBody(response)).toMatchObject({
        code: 'METHOD_NOT_ALLOWED',
        message: expect.stringContaining('Expected POST, got GET'),
      });
    });

    it('answers 400 to a start with malformed JSON, without calling the runner', async () => {
      const url = await mounted(twoSteps().workflow);
      const response = await start(url, '{"text": ');
      expect(response.status).toBe(400);
      expect(await errorBody(response)).toMatchObject({
        code: 'PROTOCOL',
        message: expect.stringContaining('Malformed JSON in the request body'),
      });
      expect(runner.starts).toEqual([]);
    });

    it('starts a run: 200 { workflowRunId }, the runner gets url, body and redacted headers', async () => {
      const url = await mounted(twoSteps().workflow, { retries: 5, retryDelay: 250 });
      const body = JSON.stringify({ text: 'hello' });
      const response = await start(url, body, {
        authorization: 'Bearer user-secret',
        cookie: 'session=abc',
        'x-trace': 'kept',
      });
      expect(response.status).toBe(200);
      const { workflowRunId } = (await response.json()) as { workflowRunId: string };
      expect(workflowRunId).toMatch(RUN_ID_PATTERN);
      expect(runner.starts).toHaveLength(1);
      const received = runner.starts[0]!;
      expect(received).toMatchObject({ url, body, retries: 5, retryDelayMs: 250 });
      expect(received.headers).toMatchObject({
        authorization: '[redacted]',
        cookie: '[redacted]',
        'x-trace': 'kept',
        'content-type': 'application/json',
      });
      expect(JSON.stringify(received)).not.toMatch(/user-secret|session=abc/);
      expect(received).not.toHaveProperty('idempotencyKey');

      const again = (await (await start(url, body)).json()) as { workflowRunId: string };
      expect(again.workflowRunId).toMatch(RUN_ID_PATTERN);
      expect(again.workflowRunId).not.toBe(workflowRunId);
    });

    it('starts a run with an empty body', async () => {
      const url = await mounted(twoSteps().workflow);
      expect((await send(url, { method: 'POST' })).status).toBe(200);
      expect(runner.starts[0]).toMatchObject({ body: '' });
    });

    it('forwards Idempotency-Key as idempotencyKey', async () => {
      const url = await mounted(twoSteps().workflow);
      const ids = [];
      for (let i = 0; i < 2; i++) {
        const response = await start(url, '{"text":"x"}', { 'Idempotency-Key': 'order-42' });
        ids.push(((await response.json()) as { workflowRunId: string }).workflowRunId);
      }
      expect(runner.starts.map((s) => s.idempotencyKey)).toEqual(['order-42', 'order-42']);
      expect(ids[0]).toBe(ids[1]);
    });

    it('answers 500 naming WF_TOKEN when no token is set', async () => {
      vi.stubEnv('WF_TOKEN', '');
      vi.stubEnv('SERVICE_TOKEN', '');
      const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
      const url = await mounted(twoSteps().workflow, { token: undefined });
      const response = await start(url, '{"text":"x"}');
      expect(response.status).toBe(500);
      expect(await errorBody(response)).toMatchObject({
        code: 'CONFIG',
        message: expect.stringContaining('WF_TOKEN is not set'),
      });
      expect(logged).toHaveBeenCalled();
      expect(runner.starts).toEqual([]);
    });

    it('answers 413 to a start body over maxBodyBytes', async () => {
      const url = await mounted(twoSteps().workflow, { maxBodyBytes: 64 });
      const response = await start(url, JSON.stringify({ text: 'x'.repeat(200) }));
      expect(response.status).toBe(413);
      expect((await errorBody(response)).message).toContain('larger than the limit of 64 bytes');
      expect(runner.starts).toEqual([]);
    });

    it('answers 502 when the runner is unreachable', async () => {
      const url = await mounted(twoSteps().workflow, { runnerUrl: await unusedUrl() });
      const response = await start(url, '{"text":"x"}');
      expect(response.status).toBe(502);
      expect(await errorBody(response)).toMatchObject({
        code: 'RUNNER',
        message: expect.stringContaining('Could not reach the wfkit runner'),
      });
    });

    it('answers 502 when the runner refuses the start', async () => {
      const url = await mounted(twoSteps().workflow, { token: 'not-the-runners-token' });
      const response = await start(url, '{"text":"x"}');
      expect(response.status).toBe(502);
      expect((await errorBody(response)).message).toMatch(
        /refused to start the run \(401\): Expected a valid bearer token/,
      );
    });

    it('treats an unsigned drive-looking request as a start and runs nothing', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const body = driveBody({ runId: RUN_ID, body: '{"text":"x"}', steps: [] });
      const response = await start(url, body);
      expect(response.status).toBe(200);
      expect(runner.starts).toEqual([expect.objectContaining({ body })]);
      expect(calls.workflow).toBe(0);
    });

    it('answers 401 to a forged signature and never calls the workflow', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const forged = await driveRequest(url, 'some-other-token', { runId: RUN_ID, body: '{"text":"x"}', steps: [] });
      const response = await send(forged);
      expect(response.status).toBe(401);
      expect(await errorBody(response)).toMatchObject({
        code: 'SIGNATURE',
        message: expect.stringContaining('Invalid signature'),
      });

      const body = driveBody({ runId: RUN_ID, body: '{"text":"x"}', steps: [] });
      const otherUrl = await signRequest({ url: url + '/elsewhere', body, tokens: [runner.token] });
      expect((await send(url, { method: 'POST', headers: otherUrl, body })).status).toBe(401);
      const halfSigned = { [Header.SignatureId]: 'msg_1' };
      expect((await send(url, { method: 'POST', headers: halfSigned, body })).status).toBe(401);
      expect(calls.workflow).toBe(0);
      expect(runner.starts).toEqual([]);
    });

    it('answers a signed probe 200 with its framework and public URL, and never runs the workflow', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow, { baseUrl: 'https://abc.tunnel.test' });
      const body = JSON.stringify({ probe: true });
      // Signed over the URL it is reached at and the tunnel's, one signature each, as `wf dev` does;
      // the answer names the one the runner will call.
      const tunnel = `https://abc.tunnel.test${new URL(url).pathname}`;
      const claim = { id: 'probe_1', timestamp: Math.floor(Date.now() / 1000), deadline: Date.now() + 30_000 };
      const [reached, public_] = await Promise.all(
        [url, tunnel].map((u) => signRequest({ url: u, body, tokens: [runner.token], ...claim })),
      );
      const headers = {
        'content-type': 'application/json',
        [Header.Probe]: '1',
        ...reached,
        [Header.Signature]: `${reached![Header.Signature]} ${public_![Header.Signature]}`,
      };
      const response = await send(url, { method: 'POST', headers, body });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { ok: boolean; framework: string | null; url: string };
      expect(answer).toEqual({
        ok: true,
        framework: expect.toSatisfy((f: unknown) => f === null || typeof f === 'string'),
        url: `https://abc.tunnel.test${new URL(url).pathname}`,
      });
      expect(calls.workflow).toBe(0);
      expect(runner.starts).toEqual([]);
    });

    it('answers 401 to a forged or unsigned probe, and never starts or runs anything', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const body = JSON.stringify({ probe: true });
      const forged = await signRequest({ url, body, tokens: ['some-other-token'] });
      const refused = await send(url, { method: 'POST', headers: { [Header.Probe]: '1', ...forged }, body });
      expect(refused.status).toBe(401);
      expect(await errorBody(refused)).toMatchObject({
        code: 'SIGNATURE',
        message: expect.stringContaining('Invalid signature'),
      });
      const unsigned = await send(url, { method: 'POST', headers: { [Header.Probe]: '1' }, body });
      expect(unsigned.status).toBe(401);
      expect(await errorBody(unsigned)).toMatchObject({
        code: 'SIGNATURE',
        message: expect.stringContaining('Unsigned request'),
      });
      expect(calls.workflow).toBe(0);
      expect(runner.starts).toEqual([]);
    });

    it('drives a new run: both steps back to back, one line each, the second sees the first', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const response = await driveFetch(url, { runId: RUN_ID, body: '{"text":"hello"}', steps: [] });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/x-ndjson');
      const lines = await readOutcomes(response);
      expect(lineKinds(lines)).toEqual([
        'started:initial-step',
        'step:initial-step',
        'started:second-step',
        'step:second-step',
        'done',
      ]);
      expect(lines[0]).toMatchObject({ t: 'started', index: 0, group: 1 });
      expect(lines[1]).toMatchObject({ t: 'step', index: 0 });
      expect(carriedValue(lines[1])).toBe('HELLO');
      expect(lines[2]).toMatchObject({ t: 'started', index: 1, group: 2 });
      expect(lines[3]).toMatchObject({ t: 'step', index: 1 });
      expect(carriedValue(lines[3])).toEqual({ saw: 'HELLO', length: 5 });
      expect(lines[4]?.t).toBe('done');
      expect(carriedValue(lines[4])).toEqual({ runId: RUN_ID, seen: { saw: 'HELLO', length: 5 } });
      expect(calls).toEqual({ workflow: 1, first: 1, second: 1 });
    });

    it('replays a committed step without calling its fn again', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const steps = [committedStep(0, 'initial-step', 'FROM-RECORD')];
      const lines = await readOutcomes(
        await driveFetch(url, { runId: RUN_ID, body: '{"text":"hello"}', steps, attempt: 2 }),
      );
      expect(calls.first).toBe(0);
      expect(lineKinds(lines)).toEqual(['started:second-step', 'step:second-step', 'done']);
      expect(lines[1]).toMatchObject({ index: 1 });
      expect(carriedValue(lines[1])).toEqual({ saw: 'FROM-RECORD', length: 11 });
    });

    it('answers 400 to a signed drive with a malformed body, without running anything', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const body = JSON.stringify({ v: 1, runId: RUN_ID, body: '', headers: {}, steps: 'nope', attempt: 1 });
      const response = await send(url, {
        method: 'POST',
        headers: await signRequest({ url, body, tokens: [runner.token] }),
        body,
      });
      expect(response.status).toBe(400);
      expect((await errorBody(response)).message).toContain('`steps` in the drive request');
      expect(calls.workflow).toBe(0);
    });

    it('answers 403 to a start the authorize option refuses, but still accepts signed drives', async () => {
      const seen: string[] = [];
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow, {
        authorize: (request) => {
          seen.push(request.headers.get('x-api-key') ?? '');
          return request.headers.get('x-api-key') === 'let-me-in';
        },
      });
      const refused = await start(url, '{"text":"x"}');
      expect(refused.status).toBe(403);
      expect(await errorBody(refused)).toMatchObject({ code: 'FORBIDDEN' });
      expect(runner.starts).toEqual([]);
      expect((await start(url, '{"text":"x"}', { 'x-api-key': 'let-me-in' })).status).toBe(200);
      expect(runner.starts[0]?.headers['x-api-key']).toBe('[redacted]');

      const lines = await readOutcomes(await driveFetch(url, { runId: RUN_ID, body: '{"text":"x"}', steps: [] }));
      expect(lines.at(-1)?.t).toBe('done');
      expect(seen).toEqual(['', 'let-me-in']);
      expect(calls.workflow).toBe(1);
    });

    it('fetches committed steps from the runner when the drive request carries none', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      runner.steps.set(RUN_ID, [committedStep(0, 'initial-step', 'FETCHED')]);
      const lines = await readOutcomes(await driveFetch(url, { runId: RUN_ID, body: '{"text":"x"}', steps: null }));
      expect(runner.stepFetches).toEqual([RUN_ID]);
      expect(calls.first).toBe(0);
      expect(lines[1]).toMatchObject({ t: 'step', name: 'second-step' });
      expect(carriedValue(lines[1])).toEqual({ saw: 'FETCHED', length: 7 });
    });

    it('answers 502 when the runner does not know the run whose steps it must fetch', async () => {
      const { workflow, calls } = twoSteps();
      const url = await mounted(workflow);
      const response = await driveFetch(url, { runId: 'wfr_UNKNOWN', body: '{"text":"x"}', steps: null });
      expect(response.status).toBe(502);
      expect((await errorBody(response)).message).toContain('failed with 404');
      expect(calls.workflow).toBe(0);
    });

    it('answers 502 when the runner is unreachable for fetching steps', async () => {
      const { workflow, calls } = twoSteps();
      const runnerUrl = await unusedUrl();
      const url = await mounted(workflow, { runnerUrl });
      const response = await send(
        await driveRequest(url, runner.token, { runId: RUN_ID, body: '{"text":"x"}', steps: null }),
      );
      expect(response.status).toBe(502);
      expect((await errorBody(response)).message).toContain(
        `Could not reach the wfkit runner at ${runnerUrl}/v1/runs/${RUN_ID}/steps`,
      );
      expect(calls.workflow).toBe(0);
    });

    // Forged Host headers, raw request lines and slow bodies need a socket; the fetch-style hosts
    // meet these rules on their bridged mounts (adapters.test.ts).
    if (!socketlessMount) describeTrust(mount);
    // A real runner drives the route over HTTP, so only mounts on a port.
    if (!socketlessMount) describeDeploy(mount);
    describeSchema(mount);
  });
}
