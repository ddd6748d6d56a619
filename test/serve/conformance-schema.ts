import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServeOptions, Workflow, WorkflowContext } from '../../serve/core/handler.js';
import type { StandardSchemaV1 } from '../../serve/core/schema.js';
import { driveRequest, readOutcomes } from '../helpers/drive.js';
import { fakeRunner, type Endpoint, type FakeRunner } from '../helpers/endpoint.js';
import { z } from 'zod';
import type { Mount } from './conformance-mount.js';

const RUN_ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';

/** A validator written against the spec alone, async, with `{ key }` path segments. */
const handWritten: StandardSchemaV1<unknown, { n: number }> = {
  '~standard': {
    version: 1,
    vendor: 'hand',
    validate: async (value) => {
      const n = (value as { n?: unknown } | undefined)?.n;
      if (typeof n === 'number') return { value: { n: n * 2 } };
      return { issues: [{ message: `Expected a number, received ${typeof n}`, path: [{ key: 'n' }] }] };
    },
  },
};

interface Issue {
  path: Array<string | number>;
  message: string;
}

/**
 * Part of the adapter suite: `serve(fn, { schema })` with zod, valibot and a hand-written Standard
 * Schema. A failing start body is 400 with the issues and never reaches the runner; a passing one
 * reaches it as the validated JSON, which is what the workflow then sees.
 */
export function describeSchema(mount: Mount): void {
  describe('schema: validated start payloads', () => {
    let runner: FakeRunner;
    const open: Endpoint[] = [];
    let handle: ((request: Request) => Promise<Response>) | undefined;
    beforeEach(async () => {
      runner = await fakeRunner();
    });
    afterEach(async () => {
      await Promise.all([...open.splice(0), runner].map((e) => e.close()));
    });

    async function mounted(workflow: Workflow<any, any>, options: ServeOptions): Promise<string> {
      const endpoint = await mount(workflow, (origin) => ({
        runnerUrl: runner.url,
        token: runner.token,
        baseUrl: origin,
        ...options,
      }));
      open.push(endpoint);
      handle = endpoint.handle;
      return endpoint.url;
    }
    const send = (request: Request): Promise<Response> => (handle ? handle(request) : fetch(request));
    const start = (url: string, body: string): Promise<Response> =>
      send(new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }));

    async function refused(response: Response): Promise<{ code: string; message: string; issues: Issue[] }> {
      expect(response.status).toBe(400);
      return ((await response.json()) as { error: { code: string; message: string; issues: Issue[] } }).error;
    }

    /** Records what the workflow saw as its payload. */
    function seeing(): { workflow: Workflow<unknown>; seen: unknown[] } {
      const seen: unknown[] = [];
      return { seen, workflow: async (context: WorkflowContext<unknown>) => void seen.push(context.requestPayload) };
    }

    it('zod: a valid body starts a run with the validated (transformed) JSON, and the workflow sees it', async () => {
      const { workflow, seen } = seeing();
      const schema = z.object({
        email: z.string().trim().toLowerCase(),
        plan: z.enum(['free', 'pro']).default('free'),
      });
      const url = await mounted(workflow, { schema });
      expect((await start(url, JSON.stringify({ email: '  Ada@Example.COM ', extra: 1 }))).status).toBe(200);
      expect(runner.starts).toHaveLength(1);
      const body = runner.starts[0]!.body;
      expect(JSON.parse(body)).toEqual({ email: 'ada@example.com', plan: 'free' });

      // The drive carries the stored body; the route does not validate it again.
      const lines = await readOutcomes(
        await send(await driveRequest(url, runner.token, { runId: RUN_ID, body, steps: [] })),
      );
      expect(lines.at(-1)?.t).toBe('done');
      expect(seen).toEqual([{ email: 'ada@example.com', plan: 'free' }]);
    });

    it('zod: an invalid body is 400 VALIDATION with each issue path and message, and no run starts', async () => {
      const schema = z.object({ user: z.object({ email: z.string() }), count: z.number().int() });
      const url = await mounted(seeing().workflow, { schema });
      const error = await refused(await start(url, JSON.stringify({ user: { email: 7 }, count: 1.5 })));
      expect(error.code).toBe('VALIDATION');
      expect(error.issues.map((i) => i.path)).toEqual([['user', 'email'], ['count']]);
      expect(error.issues.every((i) => typeof i.message === 'string' && i.message !== '')).toBe(true);
      expect(error.message).toMatch(/does not match this route's schema \(zod\): user\.email: .+; count: /);
      expect(runner.starts).toEqual([]);
    });

    it('zod: an empty body is validated as undefined (400 at the root)', async () => {
      const url = await mounted(seeing().workflow, { schema: z.object({ a: z.string() }) });
      const error = await refused(await start(url, ''));
      expect(error.issues).toEqual([{ path: [], message: expect.any(String) }]);
      expect(error.message).toContain('(root): ');
      expect(runner.starts).toEqual([]);
    });

    it('valibot: an invalid body is 400 with paths unwrapped from its path items; a valid one starts', async () => {
      const schema = v.object({ items: v.array(v.object({ sku: v.string() })) });
      const url = await mounted(seeing().workflow, { schema });
      const error = await refused(await start(url, JSON.stringify({ items: [{ sku: 'a' }, { sku: 2 }] })));
      expect(error.code).toBe('VALIDATION');
      expect(error.issues).toEqual([{ path: ['items', 1, 'sku'], message: expect.stringContaining('string') }]);
      expect(error.message).toContain('(valibot)');
      expect(runner.starts).toEqual([]);

      expect((await start(url, JSON.stringify({ items: [{ sku: 'a' }] }))).status).toBe(200);
      expect(JSON.parse(runner.starts[0]!.body)).toEqual({ items: [{ sku: 'a' }] });
    });

    it('a hand-written async Standard Schema: issues with { key } segments, and its output is stored', async () => {
      const { workflow, seen } = seeing();
      const url = await mounted(workflow, { schema: handWritten });
      const error = await refused(await start(url, '{"n":"x"}'));
      expect(error.issues).toEqual([{ path: ['n'], message: 'Expected a number, received string' }]);
      expect(runner.starts).toEqual([]);

      expect((await start(url, '{"n":21}')).status).toBe(200);
      const body = runner.starts[0]!.body;
      expect(body).toBe('{"n":42}');
      const lines = await readOutcomes(
        await send(await driveRequest(url, runner.token, { runId: RUN_ID, body, steps: [] })),
      );
      expect(lines.at(-1)?.t).toBe('done');
      expect(seen).toEqual([{ n: 42 }]);
    });
  });
}
