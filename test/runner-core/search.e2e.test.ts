import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import type { Run } from '../../api/dto.js';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { NonRetryableError } from '../../protocol/errors.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/**
 * Finding runs end to end: a real runner, two real apps (two workflow URLs), runs that complete and
 * runs that fail at a named step, then `GET /v1/runs` filters over HTTP (through the one `Client`),
 * its 400s, `wf runs` with its flags, and a bulk action on the same filter.
 */

let runner: TestRunner;
let shop: TestApp;
let mail: TestApp;
/** Run ids by what they did: checkout ones failed at "charge" when asked to. */
const made: { completed: string[]; failedAtCharge: string[]; mail: string[] } = {
  completed: [],
  failedAtCharge: [],
  mail: [],
};
let client: Client;
let beforeSecond = 0;

afterEach(closeStarted);

beforeEach(async () => {
  made.completed = [];
  made.failedAtCharge = [];
  made.mail = [];
  runner = await startTestRunner();
  const options = { token: runner.token, runnerUrl: runner.url, retries: 0, retryDelay: 10 };
  shop = await startApp(
    async (context) => {
      await context.run('reserve', () => 'reserved');
      await context.run('charge', () => {
        if ((context.requestPayload as { fail?: boolean }).fail) throw new NonRetryableError('card declined');
        return 'charged';
      });
    },
    { ...options, path: '/api/checkout' },
  );
  mail = await startApp(async (context) => context.run('send', () => 'sent'), { ...options, path: '/api/mail' });
  for (const fail of [false, true, false, true]) {
    const id = await startThroughApp(shop.url, { fail });
    (fail ? made.failedAtCharge : made.completed).push(id);
    await waitForFinish(runner.runner, id);
  }
  // A clear line in time between the first runs and the last one.
  await new Promise((resolve) => setTimeout(resolve, 20));
  beforeSecond = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 5));
  made.mail.push(await startThroughApp(mail.url, {}));
  await waitForFinish(runner.runner, made.mail[0]!);
  client = new Client({ runnerUrl: runner.url, token: runner.token });
});

const ids = (runs: readonly Run[]): string[] => runs.map((run) => run.id);
const newestFirst = (list: readonly string[]): string[] => [...list].reverse();

describe('GET /v1/runs filters, through the Client', () => {
  it('filters by status, URL, URL prefix, time, failed step and id prefix, alone and combined', async () => {
    expect(ids((await client.list({ status: 'failed' })).runs)).toEqual(newestFirst(made.failedAtCharge));
    expect(ids((await client.list({ status: ['failed', 'completed'] })).runs)).toHaveLength(5);
    expect(ids((await client.list({ url: mail.url })).runs)).toEqual(made.mail);
    expect(ids((await client.list({ urlPrefix: shop.url.replace('/api/checkout', '/api/') })).runs)).toEqual(
      newestFirst([...made.completed, ...made.failedAtCharge].sort()),
    );
    expect(ids((await client.list({ failedStep: 'charge' })).runs)).toEqual(newestFirst(made.failedAtCharge));
    expect(ids((await client.list({ failedStep: 'reserve' })).runs)).toEqual([]);
    expect(ids((await client.list({ createdAfter: beforeSecond })).runs)).toEqual(made.mail);
    expect(ids((await client.list({ createdBefore: beforeSecond })).runs)).toHaveLength(4);
    const target = made.failedAtCharge[0]!;
    expect(ids((await client.list({ idPrefix: target.slice(0, -3) })).runs)).toContain(target);
    expect(ids((await client.list({ idPrefix: target })).runs)).toEqual([target]);
    expect(ids((await client.list({ status: 'completed', url: shop.url, createdBefore: beforeSecond })).runs)).toEqual(
      newestFirst(made.completed),
    );
  });

  it('takes ISO dates, epoch ms and repeated or comma-separated statuses in the query string', async () => {
    const get = async (query: string) =>
      (await (await fetch(`${runner.url}/v1/runs?${query}`)).json()) as { runs: Run[] };
    const iso = new Date(beforeSecond).toISOString();
    expect(ids((await get(`createdAfter=${encodeURIComponent(iso)}`)).runs)).toEqual(made.mail);
    expect(ids((await get(`createdAfter=${beforeSecond}`)).runs)).toEqual(made.mail);
    expect((await get('status=failed&status=completed')).runs).toHaveLength(5);
    expect((await get('status=failed,completed')).runs).toHaveLength(5);
    // A cleared search box sends empty parameters: they filter nothing.
    expect((await get('url=&idPrefix=&failedStep=&createdAfter=')).runs).toHaveLength(5);
  });

  it('pages a filtered list, every page filtered', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await client.list({ urlPrefix: shop.url, limit: 1, ...(cursor !== undefined && { cursor }) });
      seen.push(...ids(answer.runs));
      if (answer.nextCursor === null) break;
      cursor = answer.nextCursor;
    }
    expect(seen).toEqual(newestFirst([...made.completed, ...made.failedAtCharge].sort()));
  });

  it('answers 400 naming the parameter for bad input, never a 5xx', async () => {
    const bad: [string, RegExp][] = [
      ['createdAfter=yesterday', /`createdAfter`.*epoch milliseconds or an ISO 8601 date.*got "yesterday"/],
      ['createdBefore=2026-13-45', /`createdBefore`.*got "2026-13-45"/],
      ['status=done', /`status`.*one or more of queued, running.*got "done"/],
      ['status=failed,nope', /`status`.*got "nope"/],
      ['url=a&url=b', /`url` at most once, got it 2 times/],
      [`idPrefix=${'x'.repeat(3000)}`, /`idPrefix` to be at most 2048 characters, got 3000/],
      ['failedStep=a%00b', /`failedStep` without NUL characters, got one at 1/],
    ];
    for (const [query, message] of bad) {
      const response = await fetch(`${runner.url}/v1/runs?${query}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message, query).toMatch(message);
    }
    for (const query of [
      'urlPrefix=%25',
      'idPrefix=%5C',
      'failedStep=%FF',
      'url=%F0%9F%92%A5',
      'urlPrefix=%F4%8F%BF%BF',
      'createdAfter=9999999999999999',
    ]) {
      expect((await fetch(`${runner.url}/v1/runs?${query}`)).status, query).toBe(200);
    }
  });
});

/** A CliIO whose lines land in `out`. */
function captureIO(): { io: CliIO; out: string[] } {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd: tmpdir(),
    interrupted: () => new Promise(() => {}),
  };
  return { io, out };
}

async function wf(...args: string[]): Promise<{ out: string[]; error: unknown }> {
  const { io, out } = captureIO();
  const error = await createProgram(io)
    .exitOverride()
    .parseAsync([...args, '--runner', runner.url, '--token', runner.token], { from: 'user' })
    .then(
      () => undefined,
      (failure: unknown) => failure,
    );
  return { out, error };
}

describe('wf runs flags and wf bulk on the same filter', () => {
  it('lists what the flags select, keeps them in the next-page hint, and refuses bad values', async () => {
    const failed = await wf('runs', '--status', 'failed', '--failed-step', 'charge', '--url-prefix', shop.url);
    expect(failed.error).toBeUndefined();
    expect(failed.out.map((line) => line.split(/\s+/)[1])).toEqual(newestFirst(made.failedAtCharge));

    const recent = await wf('runs', '--since', new Date(beforeSecond).toISOString());
    expect(recent.out.map((line) => line.split(/\s+/)[1])).toEqual(made.mail);
    expect((await wf('runs', '--id', made.mail[0]!)).out).toHaveLength(1);
    expect((await wf('runs', '--url', 'http://127.0.0.1:1/none')).out).toEqual(['No runs match.']);

    const paged = await wf('runs', '--status', 'completed,failed', '--url', shop.url, '-n', '3');
    expect(paged.out).toHaveLength(4);
    expect(paged.out[3]).toMatch(
      new RegExp(
        `^… more: wf runs --status completed,failed --url ${shop.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} -n 3 --cursor wfr_`,
      ),
    );

    expect((await wf('runs', '--status', 'done')).error).toMatchObject({
      message: expect.stringContaining('got "done"'),
    });
    expect((await wf('runs', '--since', 'last tuesday')).error).toMatchObject({
      code: 'BAD_ARGUMENT',
      message: expect.stringContaining('got "last tuesday"'),
    });
  });

  it('wf bulk acts on the runs the store query finds (failed step and URL prefix included)', async () => {
    const result = await client.bulk({
      action: 'rerun',
      filter: { failedStep: 'charge', urlPrefix: shop.url },
      dryRun: true,
    });
    expect(result).toEqual({ matched: 2, done: 0, failed: [], truncated: false });
    const dry = await client.bulk({
      action: 'cancel',
      filter: { url: shop.url, createdAfter: beforeSecond },
      dryRun: true,
    });
    expect(dry.matched).toBe(0);
    const none = await wf('bulk', 'cancel', '--failed-step', 'reserve', '--url-prefix', shop.url, '--yes');
    expect(none.out).toEqual(['No runs match; nothing to cancel.']);
    const resumed = await wf(
      'bulk',
      'resume',
      '--status',
      'failed,cancelled',
      '--failed-step',
      'charge',
      '--url',
      shop.url,
      '--yes',
    );
    expect(resumed.out).toEqual(['resume: 2 of 2 done']);
  });
});
