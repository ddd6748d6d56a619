import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, closeServer } from './runner.js';
import { seededRandom, type SeededRandom } from './seeded-random.js';

/**
 * A fault-injecting HTTP proxy on 127.0.0.1 between the runner and an app: the faults a real
 * network and a real host produce, on demand. Each drive request gets, with probability `rate`,
 * one of these faults, else it is relayed as is:
 *
 * - `reset`: the connection is reset before anything is forwarded;
 * - `error-500`: answered 500 without forwarding;
 * - `cut-stream`: forwarded, and the response cut after a few outcome lines, in the middle of a line;
 * - `drop-answer`: forwarded, the app executes to the end, then the connection is cut before a byte
 *   of the answer is relayed;
 * - `late`: held `lateMs` (longer than the runner waits), then forwarded; the answer goes nowhere.
 *
 * The choice is seeded by the run's number in its start payload (`n`) and how many drives of that
 * run came before (a run's drives come one after another), not by arrival order across runs, so a
 * seed gives the same faults to the same drives however the runs interleave. (Not by the drive's
 * `attempt`: it counts failures, and a runner that does not count an unreachable app as one sends
 * the same attempt again, which would draw the same fault forever.)
 */

export const FAULT_KINDS = ['reset', 'error-500', 'cut-stream', 'drop-answer', 'late'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultProxyOptions {
  /** The app's origin, `http://127.0.0.1:<port>`. */
  target: string;
  seed: number;
  /** Share of requests that get a fault. */
  rate: number;
  /** How long a `late` request is held before it is forwarded. */
  lateMs: number;
  /** @default every kind */
  faults?: readonly FaultKind[];
  /**
   * Faults given for sure, whatever the draw: run `n` (its start payload's `n`) gets `forced[n][k]`
   * on its drive number k + 1, e.g. every kind once with any seed, or a run whose first drives all
   * fail. @default []
   */
  forced?: readonly (readonly FaultKind[])[];
}

export interface FaultRecord {
  kind: FaultKind | 'none';
  /** `n` of the start payload and the drive's number within its run (`n#k`): the key of the choice. */
  key: string;
  runId: string | undefined;
  /** Epoch ms the request arrived. */
  at: number;
  /** The app's status for a forwarded request (for `late`: whether the route refused the stale drive). */
  appStatus?: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the origin the app names as its public URL. */
  url: string;
  readonly records: FaultRecord[];
  close(): Promise<void>;
}

/** The run's number from the drive body's start payload; undefined when the body is not a drive. */
function runOf(body: Buffer): { n: number | undefined; runId: string | undefined } {
  try {
    const drive = JSON.parse(body.toString('utf8')) as { runId?: string; body?: string };
    const payload = JSON.parse(drive.body ?? 'null') as { n?: unknown } | null;
    return { n: typeof payload?.n === 'number' ? payload.n : undefined, runId: drive.runId };
  } catch {
    return { n: undefined, runId: undefined };
  }
}

function randomFor(seed: number, key: string): SeededRandom {
  return seededRandom(seed ^ createHash('sha256').update(key).digest().readUInt32BE(0));
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const faults = options.faults ?? FAULT_KINDS;
  const records: FaultRecord[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const drivesSeen = new Map<string, number>();
  let closing = false;

  function forward(
    req: IncomingMessage,
    body: Buffer,
    onAnswer: (answer: IncomingMessage) => void,
    onError: (error: Error) => void,
  ): void {
    const target = new URL(req.url ?? '/', options.target);
    const upstream = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, connection: 'close' } },
      onAnswer,
    );
    upstream.on('error', onError);
    upstream.end(body);
  }

  function relay(res: ServerResponse, answer: IncomingMessage): void {
    res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
    answer.pipe(res);
  }

  /** Relays `lines` complete outcome lines, then half of the next one, then cuts both sides. */
  function cutAfter(res: ServerResponse, answer: IncomingMessage, lines: number): void {
    res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
    let pending = '';
    let relayed = 0;
    const cut = (): void => {
      res.write(pending.slice(0, Math.ceil(pending.length / 2)));
      res.socket?.destroy();
      answer.destroy();
    };
    answer.setEncoding('utf8');
    answer.on('data', (chunk: string) => {
      pending += chunk;
      for (let at = pending.indexOf('\n'); at !== -1 && relayed < lines; at = pending.indexOf('\n')) {
        res.write(pending.slice(0, at + 1));
        pending = pending.slice(at + 1);
        relayed++;
      }
      if (relayed >= lines && pending !== '') cut();
    });
    // Fewer lines than planned: hold the last one back and cut it in half.
    answer.on('end', () => {
      if (!res.destroyed) cut();
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const { n, runId } = runOf(body);
      const run = n === undefined ? `unparsed:${createHash('sha256').update(body).digest('hex')}` : String(n);
      const k = (drivesSeen.get(run) ?? 0) + 1;
      drivesSeen.set(run, k);
      const key = `${run}#${k}`;
      const random = randomFor(options.seed, key);
      const drawn: FaultKind | 'none' = random.chance(options.rate) ? random.pick(faults) : 'none';
      const forced = n === undefined ? undefined : options.forced?.[n]?.[k - 1];
      const kind = forced ?? drawn;
      const record: FaultRecord = { kind, key, runId, at: Date.now() };
      records.push(record);
      const failed = (error: Error): void => {
        if (!res.headersSent && !res.destroyed)
          res.writeHead(502, { connection: 'close' }).end(`fault proxy: ${error.message}`);
        else res.destroy();
      };
      const seen = (answer: IncomingMessage): void => void (record.appStatus = answer.statusCode);
      switch (kind) {
        case 'reset':
          return void req.socket.resetAndDestroy();
        case 'error-500':
          return void res
            .writeHead(500, { 'content-type': 'text/plain', connection: 'close' })
            .end('fault proxy: injected 500');
        case 'cut-stream':
          return forward(req, body, (answer) => (seen(answer), cutAfter(res, answer, random.between(0, 3))), failed);
        case 'drop-answer':
          return forward(
            req,
            body,
            (answer) => {
              seen(answer);
              answer.resume();
              answer.on('end', () => req.socket.destroy());
              answer.on('error', () => req.socket.destroy());
            },
            failed,
          );
        case 'late': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (closing) return;
            forward(
              req,
              body,
              (answer) => (seen(answer), res.destroyed ? answer.resume() : relay(res, answer)),
              failed,
            );
          }, options.lateMs);
          timers.add(timer);
          return;
        }
        case 'none':
          return forward(req, body, (answer) => (seen(answer), relay(res, answer)), failed);
      }
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    async close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      await closeServer(server);
    },
  };
}
