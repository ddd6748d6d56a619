import type { EgressGate, EgressResponse } from '../egress/gate.js';
import type { EgressPurpose } from '../egress/destinations.js';
import type { Slot } from '../egress/slots.js';

export { DEFAULT_HEADERS_TIMEOUT_MS, type DispatchOptions } from '../egress/agents.js';

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
export function postToEndpoint(
  egress: EgressGate,
  { purpose, slot, url, headers, body, signal }: EndpointPost,
): Promise<EndpointResponse> {
  return egress.stream({ purpose, slot, url: new URL(url), method: 'POST', headers, body, signal });
}
