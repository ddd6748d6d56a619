import type { AlertOptions } from '../../runner-core/alerts/options.js';
import { LOOPBACK_ORIGINS } from '../../runner-core/egress/origins.js';
import type { OtelConfig } from '../../runner-core/telemetry/otel-config.js';
import type { UpstashSigningKeys } from '../../runner-core/qstash/signing-keys.js';
import { startProductionRunner, type ProductionRunner } from './production-runner.js';

export interface LocalRunnerOptions {
  dbPath: string;
  host: string;
  port: number;
  tokens: string[];
  /** Header names redacted besides the built-in credential headers. */
  redactHeaders?: readonly string[];
  /** Where each token came from (`--token`, `.wf/token`), for a refusal's message off loopback. */
  tokenNames?: readonly string[];
  /** Origins it may call besides this machine's (`--allow-origin`; `wf dev` adds the tunnel's once open). */
  allowOrigins?: string[];
  unreachableHorizonMs?: number;
  driveTimeoutMs?: number;
  /** Delete finished runs this long after they finished (`--retention`); 0 keeps them. */
  retentionMs?: number;
  /** Export OpenTelemetry traces here (`--otel-endpoint`, OTEL_*). */
  otel?: OtelConfig;
  /** Failure alerts (`--alert-webhook`); off when absent. */
  alerts?: AlertOptions;
  /** Keys Upstash-protocol deliveries are signed with (`wf dev` always has a pair). */
  upstashSigningKeys?: UpstashSigningKeys;
  /** `--upstash-max-retries`, `--upstash-max-message-size`. */
  upstashMaxRetries?: number | undefined;
  upstashMaxMessageSize?: number | undefined;
}

export interface LocalRunner extends Pick<ProductionRunner, 'runner' | 'server' | 'url'> {
  close(): Promise<void>;
}

/** How long `wf dev` lets drives in flight finish on the way out; the rest run again next time. */
const STOP_GRACE_MS = 2_000;

/**
 * `wf dev`'s runner: the same runner, API and shutdown as `wf start`, on a SQLite file it owns
 * (so a killed predecessor's runs resume at once). On loopback its reads are open (the
 * dashboards and `wf logs` of the developer's own machine need no token); `wf start` keeps them closed.
 */
export async function startLocalRunner(options: LocalRunnerOptions): Promise<LocalRunner> {
  const started = await startProductionRunner({
    database: options.dbPath,
    cwd: '.',
    host: options.host,
    port: options.port,
    tokens: options.tokens,
    tokenNames: options.tokenNames,
    openOnLoopback: true,
    redactHeaders: options.redactHeaders,
    // Loopback on any port: the app's dev server, wherever it listens on this machine.
    allowedOrigins: [...LOOPBACK_ORIGINS, ...(options.allowOrigins ?? [])],
    unreachableHorizonMs: options.unreachableHorizonMs,
    driveTimeoutMs: options.driveTimeoutMs,
    retentionMs: options.retentionMs,
    otel: options.otel,
    ...(options.alerts && { alerts: options.alerts }),
    upstashSigningKeys: options.upstashSigningKeys,
    upstashMaxRetries: options.upstashMaxRetries,
    upstashMaxMessageSize: options.upstashMaxMessageSize,
  });
  return {
    runner: started.runner,
    server: started.server,
    url: started.url,
    close: () => started.close(STOP_GRACE_MS),
  };
}
