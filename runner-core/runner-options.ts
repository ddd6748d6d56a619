import type { AlertOptions } from './alerts/options.js';
import type { DispatchOptions } from './drive/dispatch.js';
import type { EgressOptions } from './egress/gate.js';
import { consoleLogger, type Logger } from './telemetry/logger.js';
import { LOOPBACK_ORIGINS } from './egress/origins.js';
import type { Store } from './store/types.js';
import type { Tracing } from './telemetry/tracing.js';
import { unreachablePolicy, type UnreachablePolicy } from './drive/unreachable.js';
import type { UpstashSigningKeys } from './qstash/signature.js';
import { upstashLimits, type UpstashLimits } from './qstash/publish/limits.js';

/** What a `Runner` is built from (and `createRunner`, which adds the store and the API's). */
export interface RunnerOptions {
  store: Store;
  /** Tokens apps authenticate with; drive requests are signed with each (rotation). */
  tokens: readonly string[];
  /** Drive requests in flight at once. @default 256 */
  concurrency?: number;
  /** How long a claimed run stays ours without renewal. @default 15000 */
  leaseMs?: number;
  /** Longest wait between two looks for due work (timers cover the rest). @default 1000 */
  pollMs?: number;
  dispatch?: DispatchOptions;
  /**
   * The egress gate's fair share per destination origin (runner-core/egress/): at most
   * `perOrigin` (32) calls in flight to one call target, `perAppOrigin` (unlimited) requests to
   * one app origin; more wait in the store, not in a slot.
   */
  egress?: EgressOptions;
  /** How long a notify that no wait received is kept for a wait registered later. @default 10 minutes */
  eventKeepMs?: number;
  /**
   * Retention: runs that finished more than this many ms ago, and owe nothing (no pending
   * failureFunction call, alert or QStash failure callback), are deleted in the background with
   * every row under them (runner-core/retention/). `wf start` passes 30 days, `wf dev` 7.
   * @default 0: keep every run forever
   */
  retention?: number;
  /** This runner is the store's only user (SQLite): take over leftover leases on start. @default false */
  exclusive?: boolean;
  /**
   * Header names redacted before anything is stored or shown, besides the built-in
   * `CREDENTIAL_HEADERS` (case does not matter). A `context.call`'s real values are sealed.
   */
  redactHeaders?: readonly string[];
  /**
   * How long and how often an app that does not answer is tried again, apart from any step's
   * retries: base 1 s, capped at 30 s between tries, for 24 h before the run fails.
   */
  unreachable?: Partial<UnreachablePolicy>;
  /**
   * Origins the runner may send drive requests to (`https://app.example.com`, `https://*.example.com`,
   * `http://127.0.0.1:*`); a start for any other origin is refused with `OriginNotAllowedError`.
   * @default loopback only: `http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`
   */
  allowedOrigins?: readonly string[];
  /**
   * The keys QStash-protocol deliveries are signed with (`Upstash-Signature`, with `current`); an
   * `@upstash/workflow` app verifies them with QSTASH_CURRENT_SIGNING_KEY / QSTASH_NEXT_SIGNING_KEY.
   * @default derived from the first token (stable across restarts; see `defaultSigningKeys`)
   */
  upstashSigningKeys?: UpstashSigningKeys;
  /**
   * The plan limits an Upstash app's publish is held to (qstash/limits.ts): over one is QStash's 412,
   * which the SDK treats as a final failure. @default `DEFAULT_UPSTASH_LIMITS` (100 retries)
   */
  upstashLimits?: Partial<UpstashLimits>;
  inlineStepsLimitBytes?: number;
  logBodyLimitBytes?: number;
  now?: () => number;
  /**
   * Failure alerts: every failed run's signed JSON document is POSTed to `webhookUrl`, retried
   * durably until delivered (runner-core/alerts/). Off when absent.
   */
  alerts?: AlertOptions;
  /** Where the runner reports failed drives, lost leases, failed polls and commits. @default console */
  logger?: Logger;
  /**
   * Spans for every run, drive and step (`createRunner`'s `otel` loads the OpenTelemetry one); the
   * runner shuts it down (flushes) when it stops. @default none: no spans, no `traceparent`
   */
  tracing?: Tracing;
}

/** The options `resolveRunnerOptions` fills in. */
type Defaulted =
  | 'concurrency'
  | 'leaseMs'
  | 'pollMs'
  | 'eventKeepMs'
  | 'retention'
  | 'exclusive'
  | 'allowedOrigins'
  | 'inlineStepsLimitBytes'
  | 'logBodyLimitBytes'
  | 'now'
  | 'logger';

/** `RunnerOptions` with every default applied and checked: what the runner's parts read. */
export type ResolvedRunnerOptions = Omit<RunnerOptions, Defaulted | 'unreachable' | 'upstashLimits'> &
  Required<Pick<RunnerOptions, Defaulted>> & { unreachable: UnreachablePolicy; upstashLimits: UpstashLimits };

/** The runner's defaults, stated once (the `@default`s of `RunnerOptions` above). */
export const RUNNER_DEFAULTS = {
  concurrency: 256,
  leaseMs: 15_000,
  pollMs: 1_000,
  eventKeepMs: 10 * 60_000,
  retention: 0,
  exclusive: false,
  inlineStepsLimitBytes: 1024 * 1024,
  logBodyLimitBytes: 64 * 1024,
} as const;

/** `RunnerOptions.retention`, checked: a whole number of ms, 0 for "forever". */
function checkRetention(value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(
      `Expected \`retention\` to be a whole number of milliseconds (0 keeps runs forever), got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * Every default of `options` applied, in one place, and the values that can be wrong checked
 * (`retention`, the unreachable policy, the Upstash plan limits): the runner reads the result, never `??` a default again.
 * @example resolveRunnerOptions({ store, tokens: [token] }).leaseMs // 15000
 */
export function resolveRunnerOptions(options: RunnerOptions): ResolvedRunnerOptions {
  // An option passed as `undefined` (`{ leaseMs: options.leaseMs }`) takes its default too.
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as RunnerOptions;
  return {
    ...RUNNER_DEFAULTS,
    allowedOrigins: LOOPBACK_ORIGINS,
    now: Date.now,
    logger: consoleLogger,
    ...given,
    retention: checkRetention(given.retention ?? RUNNER_DEFAULTS.retention),
    unreachable: unreachablePolicy(options.unreachable),
    upstashLimits: upstashLimits(options.upstashLimits),
  };
}
