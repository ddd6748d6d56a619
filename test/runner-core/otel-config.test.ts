import { describe, expect, it } from 'vitest';
import { RunnerConfigError } from '../../runner-core/errors.js';
import { otelConfigFromEnv, parseOtlpHeaders } from '../../runner-core/telemetry/otel-config.js';
import { runTraceIds } from '../../runner-core/telemetry/run-trace-ids.js';

describe('otelConfigFromEnv: the standard OTEL_* variables and --otel-endpoint', () => {
  it('is off (undefined) without an endpoint, whatever else is set', () => {
    expect(otelConfigFromEnv({})).toBeUndefined();
    expect(otelConfigFromEnv({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
  });

  it('appends /v1/traces to a base endpoint, and takes the traces endpoint as it is', () => {
    expect(otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'wfkit-runner',
    });
    expect(otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp/' })?.endpoint).toBe(
      'https://otel.example.com/otlp/v1/traces',
    );
    const both = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom/path',
    };
    expect(otelConfigFromEnv(both)?.endpoint).toBe('http://b:4318/custom/path');
  });

  it('lets --otel-endpoint win over the variables, and over OTEL_SDK_DISABLED', () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces', OTEL_SDK_DISABLED: 'true' };
    expect(otelConfigFromEnv(env)).toBeUndefined();
    expect(otelConfigFromEnv(env, 'http://flag:4318')?.endpoint).toBe('http://flag:4318/v1/traces');
    expect(otelConfigFromEnv({}, 'http://flag:4318/v1/traces')?.endpoint).toBe('http://flag:4318/v1/traces');
  });

  it('reads the protocol (traces-specific first), the headers and the service name', () => {
    const config = otelConfigFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%20def, x-team=core',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces',
      OTEL_SERVICE_NAME: 'orders-runner',
    });
    expect(config).toEqual({
      endpoint: 'http://c:4318/v1/traces',
      protocol: 'http/json',
      headers: { 'x-api-key': 'abc def', 'x-team': 'traces' },
      serviceName: 'orders-runner',
    });
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' },
      /OTEL_EXPORTER_OTLP_ENDPOINT to be an http\(s\) URL.*got "not a url"/,
    ],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://x/v1/traces' }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /http\/protobuf or http\/json, got "grpc" \(gRPC is not supported/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' },
      /OTEL_EXPORTER_OTLP_HEADERS to be comma-separated key=value pairs, got "novalue"/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'k=%zz' }, /URL-encoded, got "%zz"/],
  ])('refuses %o with a RunnerConfigError naming the variable', (env, message) => {
    expect(() => otelConfigFromEnv(env)).toThrow(RunnerConfigError);
    expect(() => otelConfigFromEnv(env)).toThrow(message);
  });

  it('refuses a bad --otel-endpoint naming the flag', () => {
    expect(() => otelConfigFromEnv({}, 'localhost:4318')).toThrow(/--otel-endpoint to be an http\(s\) URL/);
  });

  it('parses an empty header list as none', () => {
    expect(parseOtlpHeaders('', 'X')).toEqual({});
    expect(parseOtlpHeaders(' , ', 'X')).toEqual({});
  });
});

describe('runTraceIds', () => {
  it('derives the same W3C-shaped ids from the same run id on every runner, and different ones per run', () => {
    const a = runTraceIds('wfr_01ABC');
    expect(a).toEqual(runTraceIds('wfr_01ABC'));
    expect(a.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(runTraceIds('wfr_01ABD').traceId).not.toBe(a.traceId);
  });
});
