import type { FlowControl } from '../../../protocol/flow-control.js';
import { parseCount, parseDuration, parseRetryDelay, QStashHeaderError } from '../durations.js';
import { displayName, HeaderPrefix, UpstashHeader, WorkflowHeader } from '../headers.js';

/**
 * One message as `@upstash/qstash` publishes it (`POST /v2/publish/<url>`, one entry of
 * `POST /v2/batch`), read from its `Upstash-*` headers: where it goes and with which headers, when,
 * how often it is retried, and what follows it (a callback with the answer, a failure callback).
 * Every `Upstash-*` header the runner does not know is refused, naming it: QStash features this
 * runner lacks must not pass silently.
 */

/** A message to send later (a callback, a failure callback): its URL and its own `Upstash-*` headers. */
export interface FollowUp {
  url: string;
  headers: Record<string, string>;
}

export interface WorkflowInfo {
  runId: string;
  /** `Upstash-Workflow-Init: true`: the message that starts the run (its body is the run's payload). */
  init: boolean;
  url: string | undefined;
  /** `Upstash-Workflow-CallType`: `step` unless said otherwise (`toCallback`, `fromCallback`, `failureCall`). */
  callType: string;
}

export interface MessageSpec {
  destination: string;
  method: string;
  body: string;
  /** What the destination receives besides what the runner adds (`Upstash-Message-Id`, `-Retried`, `-Signature`). */
  deliverHeaders: Record<string, string>;
  /** The `Upstash-Forward-*` headers alone, unprefixed: a run's first message gives them to all its deliveries. */
  forwarded: Record<string, string>;
  /** Earliest delivery, ms after publishing (`Upstash-Delay`), or at (`Upstash-Not-Before`, epoch ms). */
  delayMs: number;
  notBefore: number | undefined;
  retries: number | undefined;
  retryDelay: string | undefined;
  timeoutMs: number | undefined;
  callback: FollowUp | undefined;
  failureCallback: FollowUp | undefined;
  workflow: WorkflowInfo | undefined;
  label: string | undefined;
  /** `Upstash-Flow-Control-Key` and `-Value` (`parallelism=2, rate=10, period=1m`). */
  flowControl: FlowControl | undefined;
  deduplicationId: string | undefined;
  contentBasedDeduplication: boolean;
  /** `Upstash-Redact-Fields`: `body`, `header`, `header[name]`: what the attempt log leaves out. */
  redact: string[];
  /** A run's first message made by `POST /v2/trigger` (../routes/trigger.ts), not by the SDK: see non-workflow.ts. */
  restTrigger?: boolean;
  /**
   * An entry of a resumed run's list that the run it was resumed from had delivered already
   * (../client/dlq-revive.ts): stored delivered, never sent again; its step shows as it ended.
   */
  kept?: boolean;
}

/**
 * The most `Upstash-Retries` that reads as a number at all. The plan's limit is lower and checked
 * at publish (limits.ts: over it is QStash's 412, which the SDK treats as final, not a 400).
 */
const MAX_RETRIES_READ = Number.MAX_SAFE_INTEGER;

/** The run ids the runner stores (`UPSTASH_RUN_ID_PATTERN` in ids.ts): what the SDK makes, and safe in paths. */
const RUN_ID = /^wfr_[A-Za-z0-9_-]{1,128}$/;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Visible characters, spaces and tabs (and obs-text): no CR, LF or NUL.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** `Upstash-*` headers (lower case) that are read, or deliberately dropped (telemetry, feature sets). */
const KNOWN = new Set<string>([
  UpstashHeader.Method,
  UpstashHeader.Delay,
  UpstashHeader.NotBefore,
  UpstashHeader.Retries,
  UpstashHeader.RetryDelay,
  UpstashHeader.Timeout,
  UpstashHeader.Callback,
  UpstashHeader.FailureCallback,
  UpstashHeader.Label,
  UpstashHeader.FeatureSet,
  UpstashHeader.FlowControlKey,
  UpstashHeader.FlowControlValue,
  UpstashHeader.DeduplicationId,
  UpstashHeader.ContentBasedDeduplication,
  UpstashHeader.RedactFields,
]);
const PASS_PREFIXES: string[] = [
  HeaderPrefix.Forward,
  HeaderPrefix.Workflow,
  HeaderPrefix.Telemetry,
  HeaderPrefix.Callback,
  HeaderPrefix.FailureCallback,
];

/** `parallelism=2, rate=10, period=1m` (any order, any subset with a limit) for `key`. */
export function parseFlowControlValue(key: string, value: string): FlowControl {
  const header = displayName(UpstashHeader.FlowControlValue);
  if (key.trim() === '' || key.length > 256)
    throw new QStashHeaderError(
      UpstashHeader.FlowControlKey,
      `Expected Upstash-Flow-Control-Key to be 1 to 256 characters, got "${key.slice(0, 300)}".`,
    );
  const out: FlowControl = { key };
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const match = /^(parallelism|rate|period)=(.+)$/.exec(part);
    if (!match)
      throw new QStashHeaderError(
        header,
        `Expected ${header} to be parts like parallelism=2, rate=10, period=1m, got "${part}".`,
      );
    const [, name, text] = match;
    if (name === 'period') out.periodMs = parseDuration(header, text!);
    else out[name as 'parallelism' | 'rate'] = parseCount(header, text!, 1_000_000);
  }
  if ((out.parallelism ?? 0) < 1 && (out.rate ?? 0) < 1)
    throw new QStashHeaderError(header, `Expected ${header} to set parallelism or rate (at least 1), got "${value}".`);
  if (out.periodMs !== undefined && out.periodMs < 1)
    throw new QStashHeaderError(header, `Expected the period in ${header} to be positive, got "${value}".`);
  return out;
}

/**
 * Headers the runner never forwards as they were given: the connection's own (undici sets them for
 * the request it sends; a forwarded `content-length` would not match the body) and the ones it
 * sets per delivery. An app's first request forwarded whole (the SDK does that) brings all of them.
 */
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  UpstashHeader.Signature,
  UpstashHeader.MessageId,
  UpstashHeader.Retried,
]);

export function forwardable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_FORWARDED.has(name.toLowerCase())));
}

/** The headers of the message `prefix` describes (`Upstash-Callback-X` → `Upstash-X`). */
function subHeaders(headers: Record<string, string>, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(prefix)) out[`${HeaderPrefix.Upstash}${name.slice(prefix.length)}`] = value;
  }
  return out;
}

function checkUrl(header: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new QStashHeaderError(header, `Expected ${header} to be an absolute http(s) URL, got "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new QStashHeaderError(header, `Expected ${header} to be an http(s) URL, got "${value}".`);
  return value;
}

/** Lower-cased copy: HTTP header names are case-insensitive and the SDK spells some two ways (`Runid`, `RunId`). */
export function lowerHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

/**
 * Reads one message. `headers` are the publish request's (or the batch entry's), any case; headers
 * that are neither `Upstash-*` nor `Content-Type` (the request's own `Authorization`, `Host`…) are
 * not the message's and are ignored, as QStash does. Throws `QStashHeaderError`.
 */
export function parseMessage(destination: string, rawHeaders: Record<string, string>, body: string): MessageSpec {
  const headers = lowerHeaders(rawHeaders);
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(HeaderPrefix.Upstash) || KNOWN.has(name) || PASS_PREFIXES.some((p) => name.startsWith(p)))
      continue;
    throw new QStashHeaderError(
      name,
      `The runner does not support the QStash header ${name} (it serves the part of QStash that @upstash/workflow uses).`,
    );
  }
  checkUrl('the destination', destination);
  const method = (headers[UpstashHeader.Method] ?? 'POST').toUpperCase();
  if (!METHODS.has(method))
    throw new QStashHeaderError(
      UpstashHeader.Method,
      `Expected Upstash-Method to be one of ${[...METHODS].join(', ')}, got "${headers[UpstashHeader.Method]}".`,
    );

  const deliverHeaders: Record<string, string> = {};
  const forwarded: Record<string, string> = {};
  // A call's target (`toCallback`) is not the workflow: it gets the call's own headers, not the SDK's
  // control headers (RunId, Url, Init, Sdk-Version, CallType), which would make a workflow endpoint
  // there read the call's body as a step list. QStash sends it only what was forwarded.
  const toTarget = headers[WorkflowHeader.CallType] === 'toCallback';
  if (headers['content-type'] !== undefined) deliverHeaders['content-type'] = headers['content-type'];
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(HeaderPrefix.Forward))
      deliverHeaders[name.slice(HeaderPrefix.Forward.length)] = forwarded[name.slice(HeaderPrefix.Forward.length)] =
        value;
    else if (name.startsWith(HeaderPrefix.Workflow) && !toTarget) deliverHeaders[name] = value;
  }
  const label = headers[UpstashHeader.Label];
  if (label !== undefined) deliverHeaders[UpstashHeader.Label] = label;
  for (const [name, value] of Object.entries(deliverHeaders)) {
    // Checked now: a header the runner could not send would otherwise fail every delivery.
    if (!HEADER_NAME.test(name))
      throw new QStashHeaderError(
        name,
        `Expected a forwarded header name to be an HTTP token, got "${name.slice(0, 100)}".`,
      );
    if (!HEADER_VALUE.test(value))
      throw new QStashHeaderError(
        name,
        `Expected the value of forwarded header ${name} to hold no control characters (CR, LF, NUL…).`,
      );
  }

  const read = <T>(name: string, parse: (value: string) => T): T | undefined =>
    headers[name] === undefined ? undefined : parse(headers[name]);
  const retryDelay = read(UpstashHeader.RetryDelay, (value) => (parseRetryDelay(value), value));
  const followUp = (name: string): FollowUp | undefined => {
    const url = headers[name];
    if (url === undefined) return undefined;
    const sub = subHeaders(headers, `${name}-`);
    // Validated now, so a bad callback header is the publish's 400, not a lost callback later.
    parseMessage(checkUrl(name, url), sub, '');
    return { url, headers: sub };
  };
  const runId = headers[WorkflowHeader.RunId];
  if (runId !== undefined && !RUN_ID.test(runId)) {
    throw new QStashHeaderError(
      WorkflowHeader.RunId,
      `Expected Upstash-Workflow-RunId to be wfr_ followed by at most 128 letters, digits, _ or -, got "${runId.slice(0, 200)}".`,
    );
  }
  const flowKey = headers[UpstashHeader.FlowControlKey];
  const flowValue = headers[UpstashHeader.FlowControlValue];
  if ((flowKey === undefined) !== (flowValue === undefined)) {
    throw new QStashHeaderError(
      UpstashHeader.FlowControlKey,
      'Expected Upstash-Flow-Control-Key and Upstash-Flow-Control-Value together, got only one of them.',
    );
  }
  return {
    destination,
    method,
    body,
    deliverHeaders,
    // An app's first request forwarded whole (the SDK does that) brings its connection's headers too.
    forwarded: forwardable(forwarded),
    delayMs: read(UpstashHeader.Delay, (value) => parseDuration(displayName(UpstashHeader.Delay), value)) ?? 0,
    notBefore: read(
      UpstashHeader.NotBefore,
      (value) => parseCount(displayName(UpstashHeader.NotBefore), value, 253_402_300_799) * 1_000,
    ),
    retries: read(UpstashHeader.Retries, (value) =>
      parseCount(displayName(UpstashHeader.Retries), value, MAX_RETRIES_READ),
    ),
    retryDelay,
    timeoutMs: read(UpstashHeader.Timeout, (value) => parseDuration(displayName(UpstashHeader.Timeout), value)),
    callback: followUp(UpstashHeader.Callback),
    failureCallback: followUp(UpstashHeader.FailureCallback),
    workflow:
      runId === undefined
        ? undefined
        : {
            runId,
            init: headers[WorkflowHeader.Init] === 'true',
            url: headers[WorkflowHeader.Url],
            callType: headers[WorkflowHeader.CallType] ?? 'step',
          },
    label: headers[UpstashHeader.Label],
    flowControl:
      flowKey !== undefined && flowValue !== undefined ? parseFlowControlValue(flowKey, flowValue) : undefined,
    deduplicationId: headers[UpstashHeader.DeduplicationId],
    contentBasedDeduplication: headers[UpstashHeader.ContentBasedDeduplication] === 'true',
    redact: (headers[UpstashHeader.RedactFields] ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  };
}
