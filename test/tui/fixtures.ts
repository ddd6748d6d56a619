import type { Run as StoredRun } from '../../runner-core/store/types.js';
import type { RunnerEvent } from '../../api/events.js';
import type { StreamEvent } from '../../api/events.js';
import type { Attempt, Run, Step, StepLog } from '../../api/dto.js';
import type { DataSource, EventHandlers } from '../../tui/data-source.js';

/** Run ids that sort like real ones: a larger `n` is a newer run. */
export const runId = (n: number): string => 'wfr_' + String(n).padStart(26, '0');

export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

export function makeRun(n: number, patch: Partial<Run> = {}): Run {
  return {
    id: runId(n),
    url: `http://localhost:3000/api/workflow-${n % 3}`,
    status: 'completed',
    body: '{"text":"hi"}',
    headers: { 'content-type': 'application/json' },
    createdAt: T0 + n * 1000,
    updatedAt: T0 + n * 1000 + 50,
    finishedAt: T0 + n * 1000 + 50,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 2,
    attempts: 1,
    outputEncoded: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...patch,
  };
}

export function makeStep(run: number, index: number, patch: Partial<Step> = {}): Step {
  return {
    runId: runId(run),
    index,
    name: `step-${index}`,
    kind: 'run',
    status: 'succeeded',
    outputEncoded: '[5]',
    error: null,
    startedAt: T0 + index * 10,
    finishedAt: T0 + index * 10 + 2,
    durationMs: 1.5,
    reportedExecutions: 1,
    failures: 0,
    group: index + 1,
    until: null,
    eventId: null,
    request: null,
    ...patch,
  };
}

export function makeAttempt(run: number, seq: number, patch: Partial<Attempt> = {}): Attempt {
  return {
    runId: runId(run),
    seq,
    startedAt: T0 + seq * 100,
    durationMs: 12,
    requestUrl: 'http://localhost:3000/api/workflow',
    requestHeaders: { 'content-type': 'application/json', 'wf-signature': '[redacted]' },
    requestBody: '{"v":1,"runId":"x","steps":[]}',
    responseStatus: 200,
    responseHeaders: { 'content-type': 'application/x-ndjson' },
    responseBody:
      '{"t":"started","index":0,"name":"step-0","kind":"run","group":1}\n{"t":"step","index":0,"name":"step-0","kind":"run","durationMs":1,"output":"[5]"}\n{"t":"done"}\n',
    outcome: 'done',
    error: null,
    ...patch,
  };
}

export const runEvent = (run: Run): RunnerEvent => ({ type: 'run', run });

/** A data source in memory: tests push events and see what the dashboard asked for. */
export class FakeSource implements DataSource {
  readonly label = 'http://runner.test';
  runs: Run[] = [];
  details = new Map<string, { run: Run; steps: Step[]; attempts: Attempt[]; logs?: StepLog[] }>();
  cancelled: string[] = [];
  reruns: string[] = [];
  resumed: string[] = [];
  private handlers = new Set<EventHandlers>();

  async listRuns(query: { cursor?: string; limit?: number }) {
    const sorted = [...this.runs].sort((a, b) => (a.id < b.id ? 1 : -1));
    const start = query.cursor ? sorted.findIndex((r) => r.id === query.cursor) + 1 : 0;
    const page = sorted.slice(start, start + (query.limit ?? 100));
    return { runs: page, nextCursor: start + page.length < sorted.length ? page.at(-1)!.id : null };
  }
  async getRun(id: string) {
    const detail = this.details.get(id);
    if (!detail) throw new Error(`No run with id ${id}.`);
    return { ...detail, logs: detail.logs ?? [] };
  }
  subscribe(handlers: EventHandlers) {
    this.handlers.add(handlers);
    queueMicrotask(() => handlers.open());
    return () => void this.handlers.delete(handlers);
  }
  async cancel(id: string) {
    this.cancelled.push(id);
    return makeRun(0, { id, status: 'cancelled' });
  }
  async rerun(id: string) {
    this.reruns.push(id);
    return makeRun(999_999);
  }
  async resume(id: string) {
    this.resumed.push(id);
    return makeRun(0, { id, status: 'queued' });
  }
  emit(...events: StreamEvent[]): void {
    for (const h of this.handlers) for (const e of events) h.event(e);
  }
  get subscribers(): number {
    return this.handlers.size;
  }
}

/** The runner's stored record of a fixture run (what its event bus carries): `output` is the devalue text. */
export function storedRun(run: Run): StoredRun {
  const { output: _output, outputEncoded, ...rest } = run;
  return { ...rest, output: outputEncoded };
}
