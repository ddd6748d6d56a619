/**
 * W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/): the one header the runner
 * adds to a drive request when it exports OpenTelemetry traces, so the app's own instrumentation
 * nests under the drive's span. Both sides share this file: the runner formats the header, `serve`
 * parses it into `context.trace`. Not signed: it names a span, it authorizes nothing.
 */

/** The trace a drive request belongs to, as `serve` exposes it on `context.trace`. */
export interface TraceContext {
  /** 32 lower-case hex digits: the run's trace (every drive of a run shares it). */
  readonly traceId: string;
  /** 16 lower-case hex digits: the drive request's span, the parent of the app's own spans. */
  readonly spanId: string;
  /** The trace is sampled (recorded) upstream. */
  readonly sampled: boolean;
  /** The header as received, to hand on to the app's own tracer or outgoing requests. */
  readonly traceparent: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/** `00-<traceId>-<spanId>-<flags>`, version 00 as the spec's current one. */
export function formatTraceparent(traceId: string, spanId: string, sampled = true): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/**
 * A `traceparent` header as a `TraceContext`, or undefined when absent or malformed (the spec says
 * to ignore an invalid header, never to fail the request over it).
 * @example parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.spanId // '00f067aa0ba902b7'
 */
export function parseTraceparent(value: string | null | undefined): TraceContext | undefined {
  if (!value || value.length > 512) return undefined;
  const text = value.trim();
  const m = TRACEPARENT.exec(text);
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  // Version ff is invalid; version 00 has nothing after the flags; later versions may add fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ALL_ZERO.test(traceId!) || ALL_ZERO.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, sampled: (parseInt(flags!, 16) & 1) === 1, traceparent: text };
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/**
 * The span id of step `index` executed in the drive whose span is `driveSpanId`: the runner gives
 * the step's span this id and `serve` hands it to the step's `fn`, so the app's spans nest under the
 * step without a round trip. FNV-1a 64 (synchronous, edge-safe): it needs to be shared and unique
 * within a drive, not secret.
 * @example stepSpanId('00f067aa0ba902b7', 2) // 16 hex digits, the same on both sides
 */
export function stepSpanId(driveSpanId: string, index: number): string {
  let hash = FNV_OFFSET;
  for (const char of `${driveSpanId}:${index}`) hash = ((hash ^ BigInt(char.charCodeAt(0))) * FNV_PRIME) & MASK_64;
  return (hash === 0n ? 1n : hash).toString(16).padStart(16, '0');
}

/** The trace context of step `index` inside the drive `drive` (same trace, the step's span). */
export function stepTraceContext(drive: TraceContext, index: number): TraceContext {
  const spanId = stepSpanId(drive.spanId, index);
  return {
    traceId: drive.traceId,
    spanId,
    sampled: drive.sampled,
    traceparent: formatTraceparent(drive.traceId, spanId, drive.sampled),
  };
}
