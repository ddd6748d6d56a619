import { parseFlowControl, type FlowControl } from '../flow-control.js';
import { expectObject, expectString, expectStringRecord, optionalInteger } from '../validate.js';
import type { ParseSuspension } from './types.js';

/**
 * What `context.invoke` asks the runner to start: a run of the workflow at `url`, as a start
 * request would. Stored on the parent's step in the call request's shape (method POST).
 */
export interface InvokeRequest {
  url: string;
  /** The child's raw start body (JSON text, or empty). */
  body: string;
  headers: Record<string, string>;
  /** The child's retries per step. @default the runner's */
  retries?: number;
  /** The child's flow control, resolved by the route against the child's payload when invoked. */
  flowControl?: FlowControl;
}

export function parseInvokeRequest(value: unknown, where: string): InvokeRequest {
  const o = expectObject(value, where);
  const request: InvokeRequest = {
    url: expectString(o, 'url', where),
    body: expectString(o, 'body', where),
    headers: expectStringRecord(o, 'headers', where),
  };
  const retries = optionalInteger(o, 'retries', where);
  if (retries !== undefined) request.retries = retries;
  if (o.flowControl !== undefined) request.flowControl = parseFlowControl(o.flowControl, `\`flowControl\` of ${where}`);
  return request;
}

/** `context.invoke`: a child run to start (idempotently, per parent and position) and wait for. */
export interface InvokeSuspension {
  request: InvokeRequest;
}

export const parseInvoke: ParseSuspension<InvokeSuspension> = (o, where) => ({
  request: parseInvokeRequest(o.request, `\`request\` in ${where}`),
});
