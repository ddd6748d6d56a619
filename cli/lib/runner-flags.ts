import { InvalidArgumentError, Option, type Command } from 'commander';
import ms from 'ms';
import { parseOriginPattern, splitOriginList } from '../../runner-core/egress/origins.js';
import { otelConfigFromEnv, type OtelConfig } from '../../runner-core/telemetry/otel-config.js';
import { CliError } from '../errors.js';
import type { AlertFlags } from './alert-flags.js';
import { parseFlagUrl, parseNonNegativeInt } from './parse.js';

/** The runner's resilience and reach, the same flags on `wf start` and `wf dev`. */
export interface RunnerFlags extends AlertFlags {
  /** `--allow-origin`, repeated. */
  allowOrigin: string[];
  /** `--unreachable-horizon`, in ms. */
  unreachableHorizon?: number;
  /** `--drive-timeout`, in ms. */
  driveTimeout?: number;
  /** `--otel-endpoint`: the OTLP collector's base URL (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  otelEndpoint?: string;
  /** `--upstash-max-retries`: the most `Upstash-Retries` an Upstash app's message may ask for (qstash/limits.ts). */
  upstashMaxRetries?: number;
  /** `--upstash-max-message-size`, in bytes: the largest body an Upstash app may publish or get from a call. */
  upstashMaxMessageSize?: number;
}

/**
 * Where the runner exports traces: `--otel-endpoint`, else the standard OTEL_* variables; undefined
 * when neither names an endpoint (no traces, nothing loaded).
 */
export function otelFromFlags(flags: RunnerFlags, env: NodeJS.ProcessEnv): OtelConfig | undefined {
  try {
    return otelConfigFromEnv(env, flags.otelEndpoint);
  } catch (error) {
    throw new CliError(2, 'BAD_ENV', (error as Error).message, { cause: error });
  }
}

/** A duration flag: whole milliseconds (`30000`) or a unit (`90s`, `30m`, `24h`, `2d`). */
export function parseDurationMs(value: string): number {
  const result = /^\d+$/.test(value.trim()) ? Number(value) : ms(value as ms.StringValue);
  if (typeof result !== 'number' || !Number.isFinite(result) || result < 1) {
    throw new InvalidArgumentError(`Expected a duration like 30000 (ms), 90s, 30m or 24h, got "${value}".`);
  }
  return Math.round(result);
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A size flag: bytes (`1048576`) or with a unit, 1024-based (`512kb`, `10mb`); at least 1 KiB. */
export function parseByteSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  const bytes = match ? Math.round(Number(match[1]) * SIZE_UNITS[(match[2] ?? '').toLowerCase()]!) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1024)
    throw new InvalidArgumentError(
      `Expected a size like 10mb, 512kb or 1048576 (bytes; at least 1kb), got "${value}".`,
    );
  return bytes;
}

/** `--allow-origin`, checked as it is read, collected across repeats. */
export function collectOrigin(value: string, previous: string[] = []): string[] {
  try {
    return [...previous, parseOriginPattern(value).text];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `WF_ALLOWED_ORIGINS`: patterns separated by commas or spaces, each checked. */
export function allowedOriginsFromEnv(env: NodeJS.ProcessEnv): string[] {
  const patterns = splitOriginList(env.WF_ALLOWED_ORIGINS);
  for (const pattern of patterns) {
    try {
      parseOriginPattern(pattern);
    } catch (error) {
      throw new CliError(2, 'BAD_ENV', `WF_ALLOWED_ORIGINS: ${(error as Error).message}`);
    }
  }
  return patterns;
}

/**
 * Adds `--allow-origin`, `--unreachable-horizon`, `--drive-timeout`, `--otel-endpoint`, `--alert-webhook`, `--public-url`
 * `--upstash-max-retries` and `--upstash-max-message-size` to a command.
 * @example addRunnerFlags(new Command('start')).action((options: RunnerFlags) => …)
 */
export function addRunnerFlags(command: Command, allowOriginHelp: string): Command {
  return command
    .addOption(new Option('--allow-origin <pattern>', allowOriginHelp).argParser(collectOrigin).default([], 'none'))
    .addOption(
      new Option(
        '--unreachable-horizon <duration>',
        "how long an app that does not answer is tried again (its steps' retries untouched) before its runs fail (default 24h)",
      ).argParser(parseDurationMs),
    )
    .addOption(
      new Option(
        '--drive-timeout <duration>',
        'how long the runner waits for a drive response to start (default 30s); the route starts no step after it or the lease, whichever ends first',
      ).argParser(parseDurationMs),
    )
    .addOption(
      new Option(
        '--otel-endpoint <url>',
        'export OpenTelemetry traces over OTLP/HTTP to this collector, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT; protocol, headers and service name from the OTEL_* variables)',
      ),
    )
    .addOption(
      new Option(
        '--alert-webhook <url>',
        'POST a signed JSON alert here once per failed run, retried until delivered (also WF_ALERT_WEBHOOK; signed with WF_ALERT_SECRET, else the token)',
      ).argParser(parseFlagUrl),
    )
    .addOption(
      new Option(
        '--public-url <url>',
        "the dashboard's address as people reach it, for the links in alerts (also WF_PUBLIC_URL; default: the listen URL)",
      ).argParser(parseFlagUrl),
    )
    .addOption(
      new Option(
        '--upstash-max-retries <n>',
        'the most Upstash-Retries an @upstash/workflow app may ask for (default 100); more is refused with 412, as QStash refuses what is over its plan',
      ).argParser(parseNonNegativeInt),
    )
    .addOption(
      new Option(
        '--upstash-max-message-size <size>',
        "the largest body an @upstash/workflow app may publish (a step result, a payload) or get back from context.call (default 10mb, as QStash's paid plans); more is 413",
      ).argParser(parseByteSize),
    );
}
