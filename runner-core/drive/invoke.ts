import type { FlowControl } from '../../protocol/flow-control.js';
import type { CallRequest, InvokeRequest, StartRequest } from '../../protocol/messages.js';
import { decodeValue } from '../../protocol/values.js';
import { childIdempotencyKey } from '../../api/links.js';
import type { Run } from '../store/types.js';
export { childEventId, childIdempotencyKey, childRunIdOf, parentOf } from '../../api/links.js';

/**
 * Child workflows (`context.invoke`). No table of their own: the links live in fields the store
 * already has, so neither SQLite nor PostgreSQL needs a migration or a new server-side function.
 *
 * - the child's idempotency key is `invoke:<parentRunId>:<stepIndex>`: a crash between starting
 *   the child and recording it starts no second child, and the child names its parent;
 * - the parent's step keeps the child's id in `eventId` as `wf-child:<childRunId>` (filled once,
 *   like every field of a suspended step), and its start request in `request` (method POST).
 */

/**
 * How often a parent whose child has not finished looks again. The child's end wakes the parent
 * at once; this only covers a runner that died between committing the child's end and that wake.
 */
export const INVOKE_POLL_MS = 30_000;

/** An invoke step's stored request: the call shape, plus the child's resolved flow control. */
export type StoredInvokeRequest = CallRequest & { flowControl?: FlowControl };

/** The invoke request in the call shape it is stored in; one already in that shape (sealed) is kept as is. */
export function invokeAsCallRequest(request: InvokeRequest | StoredInvokeRequest): StoredInvokeRequest {
  if ('method' in request) return request;
  const out: StoredInvokeRequest = { url: request.url, method: 'POST', headers: request.headers, body: request.body };
  if (request.retries !== undefined) out.retries = request.retries;
  if (request.flowControl !== undefined) out.flowControl = request.flowControl;
  return out;
}

/** The child's start request, from the parent's stored step (flow control included: the child waits its turn). */
export function childStartRequest(parentRunId: string, index: number, request: StoredInvokeRequest): StartRequest {
  const start: StartRequest = {
    url: request.url,
    body: request.body ?? '',
    headers: request.headers,
    idempotencyKey: childIdempotencyKey(parentRunId, index),
  };
  if (request.retries !== undefined) start.retries = request.retries;
  if (request.flowControl !== undefined) start.flowControl = request.flowControl;
  return start;
}

/** What `context.invoke` returns: the child's output, or its error when it failed. */
export interface InvokeResult {
  body: unknown;
  isFailed: boolean;
  isCanceled: boolean;
}

export function invokeResult(child: Run): InvokeResult {
  if (child.status === 'completed')
    return { body: child.output === null ? undefined : decodeValue(child.output), isFailed: false, isCanceled: false };
  if (child.status === 'failed') return { body: child.error ?? undefined, isFailed: true, isCanceled: false };
  return { body: undefined, isFailed: false, isCanceled: true };
}
