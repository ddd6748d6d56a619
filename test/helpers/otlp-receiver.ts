import { createServer, type IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { closeServer, listen } from './runner.js';

/**
 * A loopback OTLP/HTTP traces receiver (what a collector is to the runner): it takes POST
 * /v1/traces in either protocol, decodes it (protobuf with protobufjs and the OTLP messages below,
 * JSON as it is) and keeps every span in one shape, so tests assert on what was really sent.
 */

/** The OTLP trace messages (opentelemetry-proto, trace/v1 and common/v1), the fields the tests read. */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; repeated Event events = 11; repeated Link links = 13; Status status = 15;
}
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_PROTO, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest');

export const SpanKindCode = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const StatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  status: { code: number; message: string };
  events: { name: string; attributes: Record<string, string | number | boolean> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, string | number | boolean> }[];
  /** The resource's service.name. */
  service: string;
}

export interface OtlpRequest {
  contentType: string;
  headers: IncomingMessage['headers'];
}

export interface OtlpReceiver {
  /** Base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  requests: OtlpRequest[];
  close(): Promise<void>;
}

type Wire = Record<string, any>;

const hexOf = (value: unknown): string =>
  typeof value === 'string'
    ? /^[0-9a-f]*$/i.test(value)
      ? value.toLowerCase()
      : Buffer.from(value, 'base64').toString('hex')
    : '';

function anyValue(value: Wire | undefined): string | number | boolean {
  if (!value) return '';
  if (value.stringValue !== undefined) return value.stringValue as string;
  if (value.boolValue !== undefined) return value.boolValue as boolean;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.arrayValue !== undefined) return JSON.stringify(((value.arrayValue as Wire).values ?? []).map(anyValue));
  return '';
}

function attributesOf(list: Wire[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key as string, anyValue(kv.value as Wire)]));
}

/** Either protocol's request, as protobufjs' `toObject` and OTLP/JSON share the camelCase field names. */
function spansOf(request: Wire): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of (request.resourceSpans ?? []) as Wire[]) {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scopeSpans of (resourceSpans.scopeSpans ?? []) as Wire[]) {
      for (const span of (scopeSpans.spans ?? []) as Wire[]) {
        spans.push({
          traceId: hexOf(span.traceId),
          spanId: hexOf(span.spanId),
          parentSpanId: hexOf(span.parentSpanId ?? ''),
          name: span.name as string,
          kind: Number(span.kind ?? 0),
          startMs: Number(BigInt(span.startTimeUnixNano ?? 0) / 1_000_000n),
          endMs: Number(BigInt(span.endTimeUnixNano ?? 0) / 1_000_000n),
          attributes: attributesOf(span.attributes),
          status: { code: Number(span.status?.code ?? 0), message: (span.status?.message as string | undefined) ?? '' },
          events: ((span.events ?? []) as Wire[]).map((event) => ({
            name: event.name as string,
            attributes: attributesOf(event.attributes),
          })),
          links: ((span.links ?? []) as Wire[]).map((link) => ({
            traceId: hexOf(link.traceId),
            spanId: hexOf(link.spanId),
            attributes: attributesOf(link.attributes),
          })),
          service,
        });
      }
    }
  }
  return spans;
}

function decode(body: Buffer, contentType: string): Wire {
  if (contentType.startsWith('application/json')) return JSON.parse(body.toString('utf8')) as Wire;
  if (contentType.startsWith('application/x-protobuf')) {
    return ExportRequest.toObject(ExportRequest.decode(body), {
      longs: String,
      bytes: String,
      defaults: false,
    }) as Wire;
  }
  throw new Error(`unexpected content-type ${contentType}`);
}

/** Listens on 127.0.0.1 (`port` 0: any free one); answers every export 200 (an empty ExportTraceServiceResponse). */
export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        spans.push(...spansOf(decode(body, contentType)));
        requests.push({ contentType, headers: req.headers });
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
        return;
      }
      if (contentType.startsWith('application/json'))
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  const bound = await listen(server, port);
  return { url: `http://127.0.0.1:${bound}`, spans, requests, close: () => closeServer(server) };
}
