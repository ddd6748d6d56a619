import { seededRandom, type SeededRandom } from '../helpers/seeded-random.js';

/**
 * Seeded malformed HTTP requests. Case `index` of seed `seed` is always the same bytes (each case
 * has its own generator), so one failing case replays alone: `WF_FUZZ_SEED=<seed>` and its index.
 */

export interface FuzzTarget {
  /** Paths the server serves, the starting points of the mutations. */
  paths: readonly string[];
  token: string;
  /** Add runner-signature-looking headers (wf-signature, wf-deadline, …) to some requests: the app. */
  signedLooking: boolean;
  /** How often a request carries the valid token. @default 0.5 */
  tokenChance?: number;
  /** Headers of the routes under test (e.g. `Upstash-*`), added to most requests. */
  headers?: (random: SeededRandom) => [string[], string];
  /** Bodies shaped like the routes' own, used for most requests instead of the generic ones. */
  bodies?: (random: SeededRandom) => [Buffer, string];
  /**
   * Well-formed requests to the routes (valid framing, method and token; hostile headers, paths and
   * bodies), sent through `fetch` instead of the generic ones: they get past the parser and the 401
   * to the code behind.
   */
  wellFormed?: (random: SeededRandom) => WellFormedRequest;
  /** Every n-th case goes through `fetch`. @default 5 */
  fetchEvery?: number;
}

export interface WellFormedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzCase {
  index: number;
  /** What the generator chose, e.g. `POST absolute-form chunked-bad deep-array`. */
  label: string;
  bytes: Buffer;
  /** How long to wait for an answer: a body shorter than declared makes the server wait. */
  timeoutMs: number;
}

const CRLF = '\r\n';
const MiB = 1024 * 1024;

const METHODS = [
  'GET',
  'POST',
  'POST',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'HEAD',
  'TRACE',
  'CONNECT',
  'PROPFIND',
  'QUERY',
  'BREW',
  'get',
  'M'.repeat(2000),
  'G\0T',
  '',
];
const VERSIONS = [
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.1',
  'HTTP/1.0',
  'HTTP/2.0',
  'HTTP/0.9',
  'HTTP/1.1x',
  'FOO',
  '',
];
// Run list filters (api/run-query.ts): bad ones must be 400s, odd but valid ones 200s, never a 5xx.
const ODD_RUN_QUERIES = [
  'status=%ZZ',
  'status=,,,',
  'status=failed&status=done',
  'createdAfter=1e400',
  'createdAfter=99999999999999999999',
  'createdBefore=2026-02-30',
  'urlPrefix=%00',
  'idPrefix=%F4%8F%BF%BF',
  `url=${'a'.repeat(5000)}`,
  'failedStep=%25_%5C',
  'urlPrefix=%ED%A0%80',
  'idPrefix=wfr_&idPrefix=x',
  'createdAfter=-1&createdBefore=0',
  'status=failed,cancelled&urlPrefix=http&failedStep=x&createdAfter=2026-01-01&limit=500&cursor=%FF',
];
const ODD_IDS = [
  '%ZZ',
  '%',
  '%00',
  '%2F..%2F',
  'a'.repeat(5000),
  '..',
  '%F0%9F%92%A9',
  '%C3%28',
  '%E2%82',
  'wfr_%ZZ',
  ' ',
  'é',
  '\u0000',
  '%25%25',
];

function target(random: SeededRandom, paths: readonly string[]): [string, string] {
  const path = random.pick(paths);
  switch (random.int(16)) {
    case 0:
      return ['//[', '//['];
    case 1:
      return [`${path}/%ZZ`, '%ZZ'];
    case 2:
      return [`/v1/events/${random.pick(ODD_IDS)}`, 'odd-event-id'];
    case 3:
      return [`http://evil.example${path}`, 'absolute-form'];
    case 4:
      return [random.pick(['*', '', ' ', 'http://[::1', '\\', '/#frag', '/\\..\\']), 'odd-target'];
    case 5:
      return [`${path}\0x`, 'nul-in-target'];
    case 6:
      return [`${path}/${'\xff\xfe\x80'}`, 'non-ascii-target'];
    case 7:
      return [`${path}/${'a'.repeat(random.pick([9_000, 70_000]))}`, 'long-target'];
    case 8:
      return [`${path}?${'q=%ZZ&'.repeat(random.between(1, 3000))}`, 'long-query'];
    case 9:
      return [`/v1/runs/${random.pick(ODD_IDS)}${random.pick(['', '/steps', '/cancel', '/rerun'])}`, 'odd-run-id'];
    case 10:
      return [`/v1/runs?${random.pick(ODD_RUN_QUERIES)}`, 'odd-run-query'];
    default:
      return [path, 'path'];
  }
}

function deep(random: SeededRandom): [string, string] {
  const depth = random.pick([1_000, 50_000]);
  return random.chance(0.5)
    ? ['['.repeat(depth) + ']'.repeat(depth), `deep-array-${depth}`]
    : ['{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `deep-object-${depth}`];
}

function body(random: SeededRandom): [Buffer, string] {
  switch (random.int(14)) {
    case 0:
      return [Buffer.alloc(0), 'empty'];
    case 1:
      return [
        Buffer.from(random.pick(['{', '{"a":', 'nul', '[1,]', '{"url":}', '"', 'NaN', '1e999999', '\u0000', '{}{}'])),
        'bad-json',
      ];
    case 2: {
      const [text, label] = deep(random);
      return [Buffer.from(text), label];
    }
    case 3:
      return [
        Buffer.concat([
          Buffer.from('{"url":"http://127.0.0.1:1/x","body":"'),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
          Buffer.from('"}'),
        ]),
        'invalid-utf8',
      ];
    case 4:
      return [random.bytes(random.between(1, 4096)), 'binary'];
    case 5:
      return [
        Buffer.from(
          JSON.stringify({
            url: random.pick(['ftp://x', 'http://[', '', 'javascript:1', 'http://127.0.0.1:1/x']),
            body: random.pick([1, null, '{}', { a: 1 }]),
            headers: random.pick([[], 'x', { a: 1 }, null]),
            retries: random.pick([-1, 1e9, 'x', 0.5]),
            delayMs: random.pick([-5, 1e300, 'soon']),
          }),
        ),
        'odd-start',
      ];
    case 6:
      return [Buffer.from(JSON.stringify({ data: random.pick([null, 1, 'x', { deep: [1, 2, 3] }]) })), 'notify-data'];
    case 7:
      return [
        Buffer.from(
          JSON.stringify({
            v: random.pick([1, 2, 'x']),
            runId: random.pick(['wfr_x', 1, null]),
            body: 1,
            steps: random.pick([[{}], 'x', null, [{ index: -1 }]]),
            attempt: -1,
          }),
        ),
        'odd-drive',
      ];
    case 8:
      return random.chance(0.25)
        ? [Buffer.alloc(MiB + 1 + random.int(MiB), 0x61), 'over-1mib']
        : [Buffer.from('{}'), 'small-json'];
    default:
      return [Buffer.from(JSON.stringify({ text: random.hex(random.between(0, 64)) })), 'json'];
  }
}

function chunked(payload: Buffer, random: SeededRandom): [Buffer, string] {
  switch (random.int(4)) {
    case 0:
      return [Buffer.from(`zz${CRLF}abc${CRLF}0${CRLF}${CRLF}`), 'chunked-bad-size'];
    case 1:
      return [
        Buffer.from(`${payload.length.toString(16)}${CRLF}${payload.toString('latin1')}`, 'latin1'),
        'chunked-unterminated',
      ];
    case 2: {
      // Over every body cap (1 MiB starts and API, 8 MiB drives): 9 MiB in 64 KiB chunks.
      const piece = Buffer.concat([Buffer.from(`10000${CRLF}`), Buffer.alloc(0x10000, 0x61), Buffer.from(CRLF)]);
      return [
        Buffer.concat([...Array.from({ length: 144 }, () => piece), Buffer.from(`0${CRLF}${CRLF}`)]),
        'chunked-over-limit',
      ];
    }
    default:
      return [
        Buffer.concat([
          Buffer.from(`${payload.length.toString(16)}${CRLF}`),
          payload,
          Buffer.from(`${CRLF}0${CRLF}${CRLF}`),
        ]),
        'chunked',
      ];
  }
}

function signatureHeaders(random: SeededRandom): string[] {
  const now = Date.now();
  return [
    `wf-signature: ${random.pick(['v1,' + Buffer.from(random.hex(64)).toString('base64'), 'v1,', 'v2,abc', '', 'v1,' + 'A'.repeat(20_000)])}`,
    `wf-signature-id: ${random.pick(['msg_1', '', 'x'.repeat(5000)])}`,
    `wf-signature-timestamp: ${random.pick([String(Math.floor(now / 1000)), '0', '-1', 'x', '99999999999999999999'])}`,
    `wf-deadline: ${random.pick([String(now + 10_000), String(now - 10_000), 'NaN', '1e400', ''])}`,
    `wf-run-id: ${random.pick(['wfr_x', '%ZZ', ''])}`,
  ];
}

/** The bytes of case `index` for `target`. */
export function fuzzCase(seed: number, index: number, fuzzTarget: FuzzTarget): FuzzCase {
  const random = seededRandom((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const labels: string[] = [];
  const method = random.pick(METHODS);
  const [path, targetLabel] = target(random, fuzzTarget.paths);
  const version = random.pick(VERSIONS);
  labels.push(JSON.stringify(method.slice(0, 12)), targetLabel, JSON.stringify(version));
  // Targets without their own bodies or headers draw exactly as before: their seeds replay the same bytes.
  let [payload, bodyLabel] = fuzzTarget.bodies && random.chance(0.7) ? fuzzTarget.bodies(random) : body(random);
  labels.push(bodyLabel);
  const headers: string[] = [];
  const host = random.int(10);
  const hosts: Record<number, [string[], string]> = {
    0: [['Host: ['], 'host-['],
    1: [['Host: 127.0.0.1', 'Host: evil.example'], 'host-twice'],
    2: [[`Host: ${'h'.repeat(9_000)}`], 'host-long'],
    3: [[], 'no-host'],
  };
  headers.push(...(hosts[host]?.[0] ?? ['Host: 127.0.0.1']));
  if (hosts[host]) labels.push(hosts[host][1]);
  if (random.chance(fuzzTarget.tokenChance ?? 0.5)) headers.push(`Authorization: Bearer ${fuzzTarget.token}`);
  if (fuzzTarget.headers && random.chance(0.7)) {
    const [lines, label] = fuzzTarget.headers(random);
    headers.push(...lines);
    labels.push(label);
  }
  if (fuzzTarget.signedLooking && random.chance(0.35)) {
    headers.push(...signatureHeaders(random));
    labels.push('signed-looking');
  }
  if (random.chance(0.6))
    headers.push(
      `Content-Type: ${random.pick(['application/json', 'application/json; charset=latin1', 'text/plain', '*/*', '\u0001'])}`,
    );
  const odd = random.int(14);
  const extra: Record<number, [string[], string]> = {
    0: [['X-Null: a\0b'], 'nul-header'],
    1: [['Bad Header: x'], 'space-in-name'],
    2: [['X-Folded: a', '  continued'], 'obs-fold'],
    3: [Array.from({ length: 300 }, (_, i) => `X-Many-${i}: ${i}`), 'many-headers'],
    4: [[`X-Big: ${'b'.repeat(80_000)}`], 'huge-header'],
    5: [['Expect: 100-continue'], 'expect-continue'],
    6: [['Connection: Upgrade', 'Upgrade: websocket'], 'upgrade'],
    7: [['Content-Encoding: gzip'], 'false-gzip'],
    8: [['X-Forwarded-Host: [', 'X-Forwarded-Proto: gopher'], 'odd-forwarded'],
    9: [['Accept: text/event-stream', 'Last-Event-ID: %ZZ'], 'sse-accept'],
    10: [['Idempotency-Key: ' + 'k'.repeat(random.pick([1, 5_000]))], 'idempotency-key'],
  };
  if (extra[odd]) {
    headers.push(...extra[odd][0]);
    labels.push(extra[odd][1]);
  }
  let timeoutMs = 4_000;
  const framing = random.int(10);
  if (framing < 2) {
    [payload, bodyLabel] = chunked(payload, random);
    headers.push(random.chance(0.85) ? 'Transfer-Encoding: chunked' : 'Transfer-Encoding: chunked, gzip');
    if (random.chance(0.2)) {
      headers.push('Content-Length: 5');
      labels.push('te-and-cl');
    }
    labels.push(bodyLabel);
    if (bodyLabel === 'chunked-unterminated') timeoutMs = 1_500;
  } else if (framing === 2) {
    const lie = random.pick(['abc', '-1', '99999999999', '1, 2', String(payload.length + 100), '0x10']);
    headers.push(`Content-Length: ${lie}`);
    if (random.chance(0.3)) headers.push(`Content-Length: ${payload.length}`);
    labels.push(`content-length-${lie}`);
    timeoutMs = 1_500;
  } else if (framing !== 3 || payload.length === 0) {
    headers.push(`Content-Length: ${payload.length}`);
  }
  if (random.chance(0.9)) headers.push('Connection: close');
  const head = `${method} ${path} ${version}${CRLF}${headers.join(CRLF)}${CRLF}${CRLF}`;
  return { index, label: labels.join(' '), bytes: Buffer.concat([Buffer.from(head, 'latin1'), payload]), timeoutMs };
}
