import { fuzzCase, type FuzzCase, type FuzzTarget, type WellFormedRequest } from './request-cases.js';
import { sendRaw, showBytes } from './raw-http.js';
import { seededRandom } from '../helpers/seeded-random.js';

/**
 * Sends seeded cases to one server process, `concurrency` at a time, most over raw TCP and every
 * fifth through `fetch` (undici: what real clients send, with odd but legal methods, headers and
 * bodies). Stops after `count` cases or `maxMs`. When the process dies, the cases in flight are
 * recorded as one crash and the process is started again (at most `maxRestarts` times), so one
 * crashing input does not hide the next.
 */

export interface FuzzOptions {
  seed: number;
  count: number;
  maxMs: number;
  concurrency: number;
  target: FuzzTarget;
  /** The process under test now: its port and whether it runs. */
  server: () => { port: number; running: () => boolean };
  /** Starts the process again after a crash. */
  restart: () => Promise<unknown>;
  /** @default 5 */
  maxRestarts?: number;
}

export interface FuzzReport {
  sent: number;
  /** One line per answer ≥ 500, with what reproduces it. */
  serverErrors: string[];
  /** One entry per crash: the cases in flight when the process was found gone. */
  crashes: string[][];
  /** How exchanges ended (answered, closed, reset, timeout) and statuses by class. */
  tally: Record<string, number>;
}

export function describeCase(seed: number, c: FuzzCase): string {
  return `WF_FUZZ_SEED=${seed} case #${c.index} [${c.label}]: ${showBytes(c.bytes)}`;
}

async function viaFetch(
  seed: number,
  index: number,
  port: number,
  target: FuzzTarget,
): Promise<{ line: string; status: number | undefined }> {
  const random = seededRandom((seed ^ Math.imul(index + 7, 0x85ebca6b)) >>> 0);
  if (target.wellFormed) return send(seed, index, port, target.wellFormed(random));
  const path = random.pick([
    ...target.paths,
    '//[',
    '/v1/events/%ZZ',
    '/%ZZ',
    `/v1/runs/${random.hex(8)}`,
    '/v1/events/%F0%9F%92%A9',
  ]);
  const method = random.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND']);
  const headers: Record<string, string> = {};
  if (random.chance(0.5)) headers.authorization = `Bearer ${target.token}`;
  if (random.chance(0.3)) headers['wf-signature'] = `v1,${random.hex(40)}`;
  if (random.chance(0.3)) headers['x-forwarded-host'] = random.pick(['[', 'evil.example', '']);
  const body =
    method === 'GET' || method === 'HEAD'
      ? undefined
      : random.pick(['', '{', '{"url":1}', '['.repeat(50_000), JSON.stringify({ text: 'x' })]);
  return send(seed, index, port, { method, path, headers, ...(body !== undefined && { body }) });
}

async function send(
  seed: number,
  index: number,
  port: number,
  { method, path, headers, body }: WellFormedRequest,
): Promise<{ line: string; status: number | undefined }> {
  const line = `WF_FUZZ_SEED=${seed} fetch case #${index}: ${method} ${path} ${JSON.stringify(headers)} body ${JSON.stringify((body ?? '').slice(0, 40))}`;
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(4_000),
    });
    await response.arrayBuffer().catch(() => {});
    return { line, status: response.status };
  } catch {
    return { line, status: undefined };
  }
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, serverErrors: [], crashes: [], tally: {} };
  let restarting: Promise<unknown> | undefined;
  let gaveUp = false;
  const maxRestarts = options.maxRestarts ?? 5;
  const count = (key: string): void => void (report.tally[key] = (report.tally[key] ?? 0) + 1);
  const inFlight = new Map<number, string>();
  const stopAt = Date.now() + options.maxMs;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.count && Date.now() < stopAt && !gaveUp) {
      await restarting;
      const { port } = options.server();
      const index = next++;
      let statuses: number[];
      let line: string;
      const every = options.target.fetchEvery ?? 5;
      if (index % every === every - 1) {
        inFlight.set(index, `WF_FUZZ_SEED=${options.seed} fetch case #${index}`);
        const answer = await viaFetch(options.seed, index, port, options.target);
        line = answer.line;
        statuses = answer.status === undefined ? [] : [answer.status];
        count(answer.status === undefined ? 'fetch-failed' : 'fetch-answered');
      } else {
        const c = fuzzCase(options.seed, index, options.target);
        line = describeCase(options.seed, c);
        inFlight.set(index, line);
        const answer = await sendRaw(port, c.bytes, { timeoutMs: c.timeoutMs });
        statuses = answer.statuses;
        count(answer.ending);
        if (statuses.some((s) => s >= 500)) line += ` → answered ${answer.head.split('\r\n')[0]}`;
      }
      report.sent++;
      for (const status of statuses) count(`${Math.floor(status / 100)}xx`);
      if (statuses.some((s) => s >= 500)) report.serverErrors.push(`${line} (statuses ${statuses.join(', ')})`);
      if (!options.server().running() && !restarting && !gaveUp) {
        report.crashes.push([...inFlight.values()]);
        gaveUp = report.crashes.length > maxRestarts;
        if (!gaveUp) restarting = options.restart().finally(() => (restarting = undefined));
      }
      inFlight.delete(index);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return report;
}
