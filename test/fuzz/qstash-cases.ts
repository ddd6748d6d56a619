import type { SeededRandom } from '../helpers/seeded-random.js';
import type { WellFormedRequest } from './request-cases.js';

/**
 * What the QStash API (`/v2`), the bulk route and the schedule routes are fuzzed with, besides the
 * malformed framing of request-cases.ts: their own paths, hostile `Upstash-*` headers, and bodies
 * shaped like theirs but wrong (a batch of odd entries, wait and notify bodies, bulk filters, cron
 * schedules). `destination` is a loopback sink the test runs, so what gets published is delivered.
 */

const ODD_EVENT_IDS = ['%ZZ', '%', 'a'.repeat(3000), '..', '%F0%9F%92%A9', '%00', 'e', ' ', '%2F'];
const RUN_ID = 'wfr_fuzz-run-0001';

export function qstashPaths(destination: string): string[] {
  const d = encodeURIComponent(destination);
  return [
    `/v2/publish/${destination}`,
    `/v2/publish/${d}`,
    '/v2/publish/',
    '/v2/publish/ftp://x',
    '/v2/publish/queues/q',
    `/v2/publish/${destination}?a=%ZZ`,
    '/v2/batch',
    `/v2/workflows/runs/${RUN_ID}`,
    '/v2/workflows/runs/%ZZ',
    '/v2/workflows/runs',
    '/v2/workflows/events',
    '/v2/workflows/logs',
    '/v2/wait/order-1',
    '/v2/notify/order-1',
    `/v2/notify/${RUN_ID}/order-1`,
    '/v2/waiters/order-1',
    '/v2/events',
    '/v2/messages/msg_x',
    '/v2/dlq',
    '/v1/runs/bulk',
    '/v1/schedules',
    '/v1/schedules/sch_x',
    '/v1/schedules/%ZZ',
    ...ODD_EVENT_IDS.map((id) => `/v2/${id.length % 2 ? 'notify' : 'wait'}/${id}`),
  ];
}

const DURATIONS = ['10s', '1', '-1', '0', '1e400', 'soon', '99999999999999d', '1h30m', '', '5ms'];
const HOSTILE_VALUES = [
  '',
  ' ',
  '%ZZ',
  '\u0001',
  'x'.repeat(9_000),
  'null',
  '[object Object]',
  '\u00ff\u00fe',
  'http://[',
  'javascript:1',
];

/** 1–6 `Upstash-*` headers, valid-looking or hostile (a callback to a non-allowed origin, odd durations, forwarded credentials). */
export function upstashHeaders(random: SeededRandom, destination: string): [string[], string] {
  const pool: (() => string)[] = [
    () => `Upstash-Method: ${random.pick(['GET', 'POST', 'DELETE', 'CONNECT', 'X'.repeat(300), ''])}`,
    () => `Upstash-Retries: ${random.pick(['0', '3', '-1', '1e9', 'x', '2.5'])}`,
    () =>
      `Upstash-Retry-Delay: ${random.pick(['1000', 'pow(2, retried) * 1000', 'max(', 'retried / 0', '1e400', 'min(1,2,3)'])}`,
    () => `Upstash-Delay: ${random.pick(DURATIONS)}`,
    () =>
      `Upstash-Not-Before: ${random.pick(['0', '-1', '99999999999999', 'x', String(Math.floor(Date.now() / 1000) + 5)])}`,
    () => `Upstash-Timeout: ${random.pick(DURATIONS)}`,
    () => `Upstash-Callback: ${random.pick([destination, 'http://evil.example/cb', 'http://[', '', 'ftp://x'])}`,
    () => `Upstash-Failure-Callback: ${random.pick([destination, 'http://169.254.169.254/', '%ZZ'])}`,
    () => `Upstash-Workflow-RunId: ${random.pick([RUN_ID, '', 'wfr_' + 'x'.repeat(500), '%ZZ', '../x'])}`,
    () =>
      `Upstash-Workflow-CallType: ${random.pick(['toCallback', 'fromCallback', 'step', 'failureCall', 'invoke', 'x'])}`,
    () => `Upstash-Workflow-Init: ${random.pick(['true', 'false', 'x'])}`,
    () => `Upstash-Workflow-Url: ${random.pick([destination, 'http://evil.example/', ''])}`,
    () => `Upstash-Workflow-Sdk-Version: ${random.pick(['1', '0', '99', 'x'])}`,
    () =>
      `Upstash-Forward-${random.pick(['Authorization', 'Cookie', 'X-Api-Key', 'Upstash-Signature', 'X'])}: ${random.pick(HOSTILE_VALUES)}`,
    () => `Upstash-Flow-Control-Key: ${random.pick(['k', '', 'k'.repeat(2000)])}`,
    () =>
      `Upstash-Flow-Control-Value: ${random.pick(['parallelism=1', 'rate=0', 'period=-1s', 'parallelism=x,rate=', 'rate=1e9, period=1ms'])}`,
    () => `Upstash-Deduplication-Id: ${random.pick(['d1', '', 'd'.repeat(3000)])}`,
    () => `Upstash-Content-Based-Deduplication: ${random.pick(['true', 'false', 'x'])}`,
    () =>
      `Upstash-Redact-Fields: ${random.pick(['body', 'header', 'header[authorization]', 'header[', ',,,', 'everything'])}`,
    () => `Upstash-Label: ${random.pick(['l', '', '\u0001', 'l'.repeat(3000)])}`,
    () => `Upstash-Queue-Name: ${random.pick(['q', ''])}`,
    () => `Upstash-Signature: ${random.pick(['eyJhbGciOiJub25lIn0.e30.', '', 'x.y.z'])}`,
  ];
  const count = random.between(1, 6);
  const lines = Array.from({ length: count }, () => random.pick(pool)());
  return [lines, `upstash-headers-${count}`];
}

const CRONS = [
  '* * * * *',
  '*/5 * * * * *',
  '0 0 31 2 *',
  '* * * * * * *',
  '',
  'x',
  '61 * * * *',
  '@hourly',
  '* * * *',
  '0 0 * * 8',
];

/** A body shaped like one of these routes' bodies, but wrong in some way (or right). */
export function qstashBody(random: SeededRandom, destination: string): [Buffer, string] {
  const json = (value: unknown, label: string): [Buffer, string] => [Buffer.from(JSON.stringify(value)), label];
  switch (random.int(9)) {
    case 0: {
      const entry = () =>
        random.pick<unknown>([
          { destination, headers: { 'Upstash-Retries': random.pick(['0', '-1', 'x']) }, body: '{}' },
          { destination: random.pick(['http://evil.example/x', 'ftp://x', '', 1, null]), body: 'x' },
          { destination, headers: random.pick([null, [], 'x', { a: 1 }]), body: random.pick([1, null, {}, '']) },
          { destination, queue: 'q' },
          null,
          1,
          'x',
          [],
        ]);
      return json(Array.from({ length: random.pick([0, 1, 3, 1001]) }, entry), 'batch');
    }
    case 1:
      return json(
        {
          url: random.pick([destination, 'http://evil.example/', 1]),
          step: random.pick([{}, null, 'x', { stepId: -1 }]),
          timeout: random.pick(['10s', -1, 'x', Infinity]),
          timeoutUrl: random.pick([undefined, 'http://[', destination]),
          timeoutHeaders: random.pick([undefined, { a: ['b'] }, { a: 'b' }, []]),
        },
        'wait',
      );
    case 2:
      return [Buffer.from(random.pick(['', '{"a":1}', 'x'.repeat(5000), '\u0000', '['.repeat(10_000)])), 'notify'];
    case 3:
      return json(
        {
          action: random.pick(['cancel', 'resume', 'rerun', 'delete', '', 1]),
          filter: random.pick([
            {},
            { status: ['failed'] },
            { status: 'x' },
            { urlPrefix: 1 },
            null,
            { createdAfter: 'x', createdBefore: -1 },
          ]),
          dryRun: random.pick([true, false, 'yes', undefined]),
        },
        'bulk',
      );
    case 4:
      return json(
        {
          cron: random.pick(CRONS),
          url: random.pick([destination, 'http://evil.example/', 'x', 1]),
          body: random.pick([undefined, {}, 'x', null]),
          timezone: random.pick([undefined, 'UTC', 'Mars/Olympus', '', 1]),
          headers: random.pick([undefined, { authorization: 'x' }, 'x', [1]]),
        },
        'schedule',
      );
    case 5:
      return json(
        { workflowRunIds: random.pick([[], ['wfr_x'], 'x', Array.from({ length: 2000 }, (_, i) => `wfr_${i}`)]) },
        'cancel-ids',
      );
    default:
      return [
        Buffer.from(random.pick(['{}', '[]', '{', 'null', '"x"', JSON.stringify({ steps: [{ stepId: 1 }] })])),
        'small',
      ];
  }
}

const ODD_QUERIES = [
  '',
  'count=-1',
  'count=1e9',
  'cursor=%ZZ',
  'cursor=x',
  'state=RUN_STARTED',
  'state=x',
  'workflowUrl=http%3A%2F%2F127.0.0.1%3A1%2F',
  'workflowRunId=wfr_x&label=l',
  'fromDate=x&toDate=-1',
  'cancel=true',
  'workflowRunIds=wfr_a&workflowRunIds=wfr_b',
  'label=x',
  'all=true',
];

/**
 * A well-formed request (the token, a method the route takes) to one of the routes, with hostile
 * ids, queries, `Upstash-*` headers and bodies: what gets past the framing and the 401 to the engine.
 */
export function qstashRequest(random: SeededRandom, destination: string, token: string): WellFormedRequest {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (random.chance(0.8)) {
    for (const line of upstashHeaders(random, destination)[0]) {
      const at = line.indexOf(': ');
      const value = line.slice(at + 2);
      // fetch refuses control characters in header values; the raw cases send those.
      if (!/[\u0000-\u001f\u007f]/.test(value)) headers[line.slice(0, at).toLowerCase()] = value;
    }
  }
  const body = (): string => qstashBody(random, destination)[0].toString('utf8');
  const id = (): string => random.pick([RUN_ID, 'order-1', ...ODD_EVENT_IDS]);
  const query = (): string => `?${random.pick(ODD_QUERIES)}`;
  switch (random.int(12)) {
    case 0:
    case 1:
      return {
        method: 'POST',
        path: `/v2/publish/${random.pick([destination, encodeURIComponent(destination), `${destination}?x=%ZZ`, 'http://evil.example/x', 'http://169.254.169.254/'])}`,
        headers,
        body: random.pick(['{}', '', body()]),
      };
    case 2:
      return { method: 'POST', path: '/v2/batch', headers, body: body() };
    case 3:
      return { method: 'POST', path: `/v2/wait/${id()}`, headers, body: body() };
    case 4:
      return {
        method: 'POST',
        path: random.chance(0.5) ? `/v2/notify/${id()}` : `/v2/notify/${id()}/${id()}`,
        headers,
        body: body(),
      };
    case 5:
      return { method: 'GET', path: random.pick([`/v2/waiters/${id()}`, `/v2/workflows/runs/${id()}`]), headers };
    case 6:
      return {
        method: 'DELETE',
        path: random.pick([`/v2/workflows/runs/${id()}${query()}`, `/v2/workflows/runs${query()}`]),
        headers,
        body: body(),
      };
    case 7:
      return {
        method: 'GET',
        path: `/v2/${random.pick(['workflows/events', 'workflows/logs', 'events', 'messages/msg_x'])}${query()}`,
        headers,
      };
    case 8:
      return { method: 'POST', path: '/v1/runs/bulk', headers, body: body() };
    case 9:
      return { method: 'POST', path: '/v1/schedules', headers, body: body() };
    case 10:
      return {
        method: random.pick(['GET', 'DELETE']),
        path: `/v1/schedules${random.chance(0.5) ? '' : `/${random.pick(['sch_x', '%ZZ', 'a'.repeat(3000), '%00'])}`}`,
        headers,
      };
    default:
      return {
        method: 'POST',
        path: `/v2/${random.pick(['publish', 'enqueue/q/x', 'topics/t', 'dlq', 'schedules/x'])}`,
        headers,
        body: body(),
      };
  }
}
