import { toMilliseconds, type Duration } from './duration.js';
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

/** Flow control as apps write it (`serve` options, `client.trigger`): Upstash Workflow's names. */
export interface FlowControlOptions<Payload = unknown> {
  /** The key, or a function of the start's payload giving it (evaluated once, at start). */
  key: string | ((payload: Payload) => string);
  /** At most this many runs of the key executing at once. */
  parallelism?: number;
  /** At most this many runs of the key started per `period`. */
  rate?: number;
  /** The window of `rate`: seconds, or a string like "1m". @default "1s" */
  period?: Duration;
}

/** Resolves the key against the payload and the period to ms: what a start request carries. */
export function resolveFlowControl<Payload>(options: FlowControlOptions<Payload>, payload: Payload): FlowControl {
  const key = typeof options.key === 'function' ? options.key(payload) : options.key;
  if (typeof key !== 'string' || key === '') {
    throw new ProtocolError(
      `Expected the flow control key to be a non-empty string, got ${JSON.stringify(key) ?? String(key)}.`,
    );
  }
  const out: FlowControl = { key };
  if (options.parallelism !== undefined) out.parallelism = options.parallelism;
  if (options.rate !== undefined) out.rate = options.rate;
  if (options.period !== undefined)
    out.periodMs = Math.round(toMilliseconds(options.period, 'the flow control `period`'));
  // The runner checks the same; failing here names the app's option instead of a 400 from afar.
  return parseFlowControl(out, `the flow control of key "${key}"`);
}
