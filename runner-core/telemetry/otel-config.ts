import { RunnerConfigError } from '../errors.js';

/** The two OTLP transports over HTTP the runner speaks (gRPC would need a native-ish stack: not offered). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where and how the runner exports its traces. */
export interface OtelConfig {
  /** The full traces URL (`…/v1/traces`) spans are POSTed to. */
  endpoint: string;
  /** @default 'http/protobuf' */
  protocol?: OtlpProtocol;
  /** Sent with every export (an API key, say). */
  headers?: Record<string, string>;
  /** The `service.name` of the runner's spans. @default 'wfkit-runner' */
  serviceName?: string;
}

export const DEFAULT_SERVICE_NAME = 'wfkit-runner';

const TRACES_PATH = 'v1/traces';

/** A base endpoint (`http://collector:4318`) as its traces URL, as the OTLP spec appends the signal's path. */
function tracesUrl(base: string, where: string): string {
  const url = checkedUrl(base, where);
  if (/\/v1\/traces\/?$/.test(url.pathname)) return url.href;
  url.pathname = url.pathname.replace(/\/*$/, '/') + TRACES_PATH;
  return url.href;
}

function checkedUrl(text: string, where: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text.trim());
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new RunnerConfigError(`Expected ${where} to be an http(s) URL like http://127.0.0.1:4318, got "${text}".`);
  }
  return url;
}

/** `key=value,key2=value2` with URL-encoded values (OTEL_EXPORTER_OTLP_HEADERS' format). */
export function parseOtlpHeaders(text: string | undefined, where: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const name = eq < 0 ? '' : pair.slice(0, eq).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new RunnerConfigError(`Expected ${where} to be comma-separated key=value pairs, got "${pair.trim()}".`);
    }
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      throw new RunnerConfigError(
        `Expected the value of "${name}" in ${where} to be URL-encoded, got "${pair.slice(eq + 1).trim()}".`,
      );
    }
    headers[name] = value;
  }
  return headers;
}

function parseProtocol(text: string, where: string): OtlpProtocol {
  const value = text.trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  const hint = value === 'grpc' ? " (gRPC is not supported: point it at the collector's HTTP port, 4318)" : '';
  throw new RunnerConfigError(`Expected ${where} to be http/protobuf or http/json, got "${value}"${hint}.`);
}

/**
 * The standard OpenTelemetry variables (and `--otel-endpoint`) as an `OtelConfig`, or undefined when
 * no endpoint is set (no traces: nothing is loaded). `flagEndpoint` and `OTEL_EXPORTER_OTLP_ENDPOINT`
 * are base URLs (`/v1/traces` appended unless there); `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as
 * it is. `OTEL_SDK_DISABLED=true` turns the variables off (an explicit flag still counts).
 * @throws RunnerConfigError naming the variable whose value is wrong
 * @example otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })?.endpoint // 'http://127.0.0.1:4318/v1/traces'
 */
export function otelConfigFromEnv(
  env: Record<string, string | undefined>,
  flagEndpoint?: string,
): OtelConfig | undefined {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  let endpoint: string | undefined;
  if (flagEndpoint !== undefined) endpoint = tracesUrl(flagEndpoint, '--otel-endpoint');
  else if (disabled) return undefined;
  else if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    endpoint = checkedUrl(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').href;
  else if (env.OTEL_EXPORTER_OTLP_ENDPOINT)
    endpoint = tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === undefined) return undefined;
  const protocolVar = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolVar] ? parseProtocol(env[protocolVar]!, protocolVar) : 'http/protobuf';
  const headers = {
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'),
  };
  return { endpoint, protocol, headers, serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME };
}
