import { egressMetricLines } from '../egress/metrics.js';
import type { Runner } from '../runner.js';
import {
  RUN_STATUSES,
  type Applied,
  type ApplyOptions,
  type Change,
  type Store,
  type StoreConnection,
} from '../store/types.js';

/*
 * Prometheus text exposition, written here rather than with prom-client: four metric families do
 * not need a registry, default process metrics or a dependency every install would pull in, and
 * the format (version 0.0.4) is a few lines of text.
 */

/** Step durations from sub-millisecond no-ops to minutes-long steps, in seconds. */
export const STEP_DURATION_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300,
];

/** A cumulative Prometheus histogram, kept in memory for this process. */
export class Histogram {
  readonly buckets: readonly number[];
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(buckets: readonly number[] = STEP_DURATION_BUCKETS) {
    this.buckets = [...buckets].sort((a, b) => a - b);
    this.counts = this.buckets.map(() => 0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    this.sum += value;
    this.count++;
    const index = this.buckets.findIndex((le) => value <= le);
    if (index >= 0) this.counts[index]!++;
  }

  /** The `_bucket`, `_sum` and `_count` lines of `name`. */
  lines(name: string): string[] {
    const out: string[] = [];
    let cumulative = 0;
    this.buckets.forEach((le, i) => {
      cumulative += this.counts[i]!;
      out.push(`${name}_bucket{le="${le}"} ${cumulative}`);
    });
    out.push(`${name}_bucket{le="+Inf"} ${this.count}`, `${name}_sum ${this.sum}`, `${name}_count ${this.count}`);
    return out;
  }
}

/** Whether `key` is an accessor (a getter) of `object` or of its prototype chain. */
function getterOf(object: object | null, key: PropertyKey): boolean {
  if (object === null) return false;
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor ? descriptor.get !== undefined : getterOf(Object.getPrototypeOf(object) as object | null, key);
}

/**
 * A store that also records, in `stepDuration`, how long each step took in the route once its
 * result (or failure) is committed. Everything else goes straight to `store`.
 */
export function instrumentStore(store: Store, stepDuration: Histogram): Store {
  const observe = (changes: readonly Change[]): void => {
    for (const change of changes) {
      if (change.type === 'step-succeeded' || change.type === 'step-failed')
        stepDuration.observe(change.durationMs / 1000);
    }
  };
  const apply = async (changes: readonly Change[], options?: ApplyOptions): Promise<Applied> => {
    const applied = await store.apply(changes, options);
    observe(changes);
    return applied;
  };
  // The QStash engine writes its step rows through the connection's apply (in its own transaction).
  const connection = observedConnection(store.connection, observe);
  return new Proxy(store, {
    get(target, key) {
      if (key === 'apply') return apply;
      if (key === 'connection') return connection;
      const value: unknown = Reflect.get(target, key);
      // A getter's value is handed out as it is: PostgresStore.sql is a connection pool that is also a
      // function, and a bound copy of it would lose `begin`, `unsafe`… (the QStash message store needs them).
      if (getterOf(target, key)) return value;
      // Bound: the stores keep their state in private fields, which a proxy receiver cannot reach.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `connection` whose `apply` also tells `observe` what it wrote. */
function observedConnection(
  connection: StoreConnection | undefined,
  observe: (changes: readonly Change[]) => void,
): StoreConnection | undefined {
  if (connection?.kind === 'sqlite') {
    return {
      ...connection,
      apply: (changes: readonly Change[], returning: boolean) => {
        const applied = connection.apply(changes, returning);
        observe(changes);
        return applied;
      },
    };
  }
  if (connection?.kind === 'postgres') {
    return {
      ...connection,
      apply: async (tx, changes, returning) => {
        const applied = await connection.apply(tx, changes, returning);
        observe(changes);
        return applied;
      },
    };
  }
  return connection;
}

function family(name: string, type: 'gauge' | 'histogram', help: string, lines: string[]): string {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines].join('\n');
}

/**
 * `GET /metrics` in the Prometheus text format. `wfkit_runs`, `wfkit_queue_depth` and `wfkit_store_size_bytes`
 * describe the whole store, so every runner of a cluster reports the same values (aggregate them with `max`);
 * the other two are this process's (aggregate with `sum`).
 *
 * @example
 * const text = await renderMetrics({ runner, stepDuration });
 */
export async function renderMetrics({
  runner,
  stepDuration,
  now = Date.now(),
}: {
  runner: Runner;
  stepDuration: Histogram;
  now?: number;
}): Promise<string> {
  const [stats, sizeBytes] = await Promise.all([runner.store.stats(now), runner.store.retention.sizeBytes()]);
  const statuses = [...new Set([...RUN_STATUSES, ...Object.keys(stats.runs)])];
  const egress = egressMetricLines(runner.egress.counts());
  return (
    [
      family(
        'wfkit_runs',
        'gauge',
        'Runs in the store, by status.',
        statuses.map((s) => `wfkit_runs{status="${s}"} ${stats.runs[s as keyof typeof stats.runs] ?? 0}`),
      ),
      family(
        'wfkit_queue_depth',
        'gauge',
        'Unfinished runs that are due now and leased by no runner: work waiting for a runner.',
        [`wfkit_queue_depth ${stats.due}`],
      ),
      family(
        'wfkit_store_size_bytes',
        'gauge',
        "The store's size on disk: SQLite's pages and WAL, or PostgreSQL's tables of the runner's schema with their indexes.",
        [`wfkit_store_size_bytes ${sizeBytes}`],
      ),
      family('wfkit_drives_in_flight', 'gauge', 'Drive requests this runner has in flight.', [
        `wfkit_drives_in_flight ${runner.drivesInFlight}`,
      ]),
      family(
        'wfkit_qstash_deliveries_in_flight',
        'gauge',
        'QStash API deliveries (@upstash/workflow apps) this runner has in flight.',
        [`wfkit_qstash_deliveries_in_flight ${runner.qstash?.deliveriesInFlight ?? 0}`],
      ),
      family(
        'wfkit_egress_in_flight',
        'gauge',
        'Requests this runner has in flight, by destination origin (kind: call targets, or apps).',
        egress.inFlight,
      ),
      family(
        'wfkit_egress_waiting',
        'gauge',
        'Runs and messages this runner deferred for want of a slot at the origin (egress.perOrigin / perAppOrigin).',
        egress.waiting,
      ),
      family(
        'wfkit_step_duration_seconds',
        'histogram',
        'How long steps ran in the route, for the step results this runner committed.',
        stepDuration.lines('wfkit_step_duration_seconds'),
      ),
    ].join('\n') + '\n'
  );
}
