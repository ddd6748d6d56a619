import { ProtocolError } from './errors.js';
import { expectObject, expectString, optionalInteger, type Fields } from './validate.js';

/**
 * Flow control of one run, resolved: the route evaluates a `key` function of the payload at start,
 * so the runner only ever sees the key's text. Runs over a limit wait in order, never dropped.
 */
export interface FlowControl {
  /** Runs sharing a key share its limits (a tenant, a user, an upstream API). */
  key: string;
  /** At most this many runs of the key executing (leased by a runner) at once. */
  parallelism?: number;
  /** At most this many runs of the key first driven per `periodMs`. */
  rate?: number;
  /** The window of `rate`, in ms. @default 1000 */
  periodMs?: number;
}

export const DEFAULT_FLOW_PERIOD_MS = 1000;

/** Parses `flowControl` of a start request; a limit must be at least 1 and one limit must be set. */
export function parseFlowControl(value: unknown, where: string): FlowControl {
  const o: Fields = expectObject(value, where);
  const out: FlowControl = { key: expectString(o, 'key', where) };
  for (const name of ['parallelism', 'rate', 'periodMs'] as const) {
    const limit = optionalInteger(o, name, where, 1);
    if (limit !== undefined) out[name] = limit;
  }
  if (out.parallelism === undefined && out.rate === undefined) {
    throw new ProtocolError(`Expected ${where} to set \`parallelism\` or \`rate\`, got neither (key "${out.key}").`);
  }
  return out;
}
