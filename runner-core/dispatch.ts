import type { EgressGate, EgressResponse } from './egress/gate.js';
import type { EgressPurpose } from './egress/destinations.js';
import type { Slot } from './egress/slots.js';

export { DEFAULT_HEADERS_TIMEOUT_MS } from './egress/agents.js';

export interface DispatchOptions {
  /** Time to the response headers; the route sends them before the first step runs. @default 30s */
  headersTimeoutMs?: number;
  /** Longest silence between two outcome lines, i.e. the longest single step. @default 15 min */
  bodyTimeoutMs?: number;
  /** Connections kept per origin. @default 256 */
  connections?: number;
}

export type EndpointResponse = EgressResponse;

/** A POST to an endpoint: a drive request, a failureFunction call, or an alert. */
export interface EndpointPost {
  purpose: EgressPurpose;
  /** The slot at the destination's origin the caller acquired (and releases). */
  slot: Slot;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

/**
 * POSTs a drive request (or an alert) through the egress gate; the caller consumes the body.
 * Timeouts become EndpointTimeoutError; a destination the gate refuses throws EgressRefusedError.
 */
export function postToEndpoint(egress: EgressGate, { purpose, slot, url, headers, body, signal }: EndpointPost): Promise<EndpointResponse> {
  return egress.stream({ purpose, slot, url: new URL(url), method: 'POST', headers, body, signal });
}
