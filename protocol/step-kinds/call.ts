import {
  expectBoolean,
  expectObject,
  expectString,
  expectStringRecord,
  optionalInteger,
  optionalString,
} from '../validate.js';
import type { ParseSuspension } from './types.js';

/** What `context.call` asks the runner to send. */
export interface CallRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Whole-exchange timeout. @default 30000 */
  timeoutMs?: number;
  /** Retries after a transport failure (or an HTTP error with `throwHttpErrors`). @default 0 */
  retries?: number;
  /** Treat a non-2xx answer as a failure instead of data. @default false */
  throwHttpErrors?: boolean;
}

/** `context.call`: an HTTP request the runner makes; its answer is the step's value. */
export interface CallSuspension {
  request: CallRequest;
}

export function parseCallRequest(value: unknown, where: string): CallRequest {
  const o = expectObject(value, where);
  const request: CallRequest = {
    url: expectString(o, 'url', where),
    method: expectString(o, 'method', where),
    headers: expectStringRecord(o, 'headers', where),
  };
  const body = optionalString(o, 'body', where);
  if (body !== undefined) request.body = body;
  for (const key of ['timeoutMs', 'retries'] as const) {
    const value = optionalInteger(o, key, where);
    if (value !== undefined) request[key] = value;
  }
  if (o.throwHttpErrors !== undefined) request.throwHttpErrors = expectBoolean(o, 'throwHttpErrors', where);
  return request;
}

export const parseCall: ParseSuspension<CallSuspension> = (o, where) => ({
  request: parseCallRequest(o.request, `\`request\` in ${where}`),
});
