import type { SerializedError } from '../../../protocol/errors.js';
import type { EgressPurpose } from '../../egress/destinations.js';
import { describeError } from '../../telemetry/logger.js';
import type { DeliveryTraceInfo } from '../../telemetry/tracing.js';
import type { StoredMessage } from '../messages/store.js';

/** How a delivery went, as far as its span cares: the error it counts as, if any. */
export type DeliveryEnd =
  | { kind: 'delivered' }
  | { kind: 'retry' | 'failed'; error: SerializedError }
  | { kind: 'unreachable' };

/** What one delivery's span is built from. */
export interface EndedDeliveryTrace {
  message: StoredMessage;
  purpose: EgressPurpose;
  seq: number;
  status: number | null;
  end: DeliveryEnd;
  transportError: unknown;
  startedAt: number;
  endedAt: number;
}

/**
 * One delivery of an Upstash run's message as the tracer's `delivery` span (telemetry/): what was
 * sent where, the answer's status, and why it did not count when it did not (an error answer, or
 * no answer: the transport's error).
 */
export function deliveryTrace({
  message,
  purpose,
  seq,
  status,
  end,
  transportError,
  startedAt,
  endedAt,
}: EndedDeliveryTrace): DeliveryTraceInfo {
  const info: DeliveryTraceInfo = {
    seq,
    attempt: message.retried + 1,
    purpose: purpose === 'call' || purpose === 'callback' || purpose === 'failure-callback' ? purpose : 'delivery',
    url: message.spec.destination,
    method: message.spec.method,
    messageId: message.id,
    startedAt,
    endedAt,
    status,
  };
  if (end.kind === 'retry' || end.kind === 'failed') info.error = end.error;
  else if (end.kind === 'unreachable') info.error = { name: 'Unreachable', message: describeError(transportError) };
  return info;
}
