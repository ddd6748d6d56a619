import { originAllowed, type OriginPattern } from './origins.js';

/**
 * The one destination policy of every request the runner sends: what each kind of request is,
 * and the rule its destination must meet. README's "Security model" lists the same table.
 *
 * | purpose            | what                                                        | rule |
 * | ------------------ | ----------------------------------------------------------- | ---- |
 * | `drive`            | a native run's drive request (schedule ticks and native invokes start runs that are driven) | allowed origins |
 * | `failure-call`     | a native run's failureFunction call (a drive)               | allowed origins |
 * | `delivery`         | a QStash message delivered to an app (Upstash steps, invokes, schedule-started runs) | allowed origins |
 * | `callback`         | a QStash call's answer sent to its `Upstash-Callback`       | allowed origins |
 * | `failure-callback` | a failed QStash run's failure callback                      | allowed origins |
 * | `call`             | a `context.call` target (native, and Upstash `toCallback`)  | allowed origins, or a public address |
 * | `alert`            | the failure alert to the operator's webhook                 | operator-set: exempt |
 *
 * The OTLP exporter (`telemetry/`, OpenTelemetry's own package, to the collector the operator
 * named) is the one sender outside the gate; it is operator-set like the alert webhook.
 */
export type EgressPurpose = 'drive' | 'failure-call' | 'delivery' | 'callback' | 'failure-callback' | 'call' | 'alert';

export type DestinationRule = 'allowed-origins' | 'allowed-origins-or-public-address' | 'operator-set';

export const DESTINATION_RULES: Readonly<Record<EgressPurpose, DestinationRule>> = {
  drive: 'allowed-origins',
  'failure-call': 'allowed-origins',
  delivery: 'allowed-origins',
  callback: 'allowed-origins',
  'failure-callback': 'allowed-origins',
  call: 'allowed-origins-or-public-address',
  alert: 'operator-set',
};

/** The rule in words, for the errors that name it. */
export const RULE_TEXT: Readonly<Record<DestinationRule, string>> = {
  'allowed-origins': 'the runner sends it only to origins its operator allowed (--allow-origin, WF_ALLOWED_ORIGINS)',
  'allowed-origins-or-public-address':
    'a call goes to an origin the operator allowed (--allow-origin, WF_ALLOWED_ORIGINS) or to a public IP address; loopback, private, link-local (cloud metadata), CGNAT and unique-local addresses are refused',
  'operator-set': 'the operator set this destination',
};

/** A request the gate refused to send: its destination breaks the rule of its purpose. */
export class EgressRefusedError extends Error {
  override name = 'EgressRefusedError';
  readonly code = 'EGRESS_REFUSED';
  readonly purpose: EgressPurpose;
  readonly origin: string;
  constructor(purpose: EgressPurpose, origin: string, detail: string) {
    super(
      `The runner refused to send a ${purpose} request to ${origin}: ${detail}. Rule: ${RULE_TEXT[DESTINATION_RULES[purpose]]}.`,
    );
    this.purpose = purpose;
    this.origin = origin;
  }

  static is(value: unknown): value is EgressRefusedError {
    return value instanceof Error && (value as { code?: unknown }).code === 'EGRESS_REFUSED';
  }
}

/**
 * Whether `url` may be sent for `purpose` judged by its URL alone: `true` (send), `false` (refuse),
 * or `'check-address'` (a call to an origin nobody allowed: the connection's address decides, at
 * connect time, see connect.ts).
 */
export function judgeDestination(
  url: URL,
  purpose: EgressPurpose,
  allowed: readonly OriginPattern[],
): boolean | 'check-address' {
  const rule = DESTINATION_RULES[purpose];
  if (rule === 'operator-set') return true;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (originAllowed(url, allowed)) return true;
  return rule === 'allowed-origins-or-public-address' ? 'check-address' : false;
}
