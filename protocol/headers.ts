/** Version of the runner <-> route wire contract. Bumped on any incompatible change. */
export const PROTOCOL_VERSION = 1;

/** Header names of the wire contract, lower-case as the Fetch API reports them. */
export const Header = {
  ProtocolVersion: 'wf-protocol-version',
  RunId: 'wf-run-id',
  Attempt: 'wf-attempt',
  /** Standard-Webhooks style signing: message id, unix seconds, and `v1,<base64>` signatures. */
  SignatureId: 'wf-signature-id',
  SignatureTimestamp: 'wf-signature-timestamp',
  Signature: 'wf-signature',
  /**
   * Signed with the others: epoch milliseconds after which the runner no longer waits for this
   * request (its drive timeout) or may have handed the run to another runner (its lease). The route
   * refuses the request after it and starts no new step after it.
   */
  Deadline: 'wf-deadline',
  IdempotencyKey: 'idempotency-key',
  /** On drive responses: the route has a `failureFunction`, so the runner calls it when the run fails. */
  FailureFunction: 'wf-failure-function',
  /**
   * On a signed request: a probe (`wf dev` checking the route), answered after the signature check
   * with `200 {"ok":true,"framework","url"}`; the workflow never runs for it.
   */
  Probe: 'wf-probe',
  RetryAfter: 'retry-after',
  /**
   * W3C Trace Context on a drive request, only when the runner exports OpenTelemetry traces: the
   * drive's span, so the app's spans nest under it (`protocol/trace-context.ts`). Not signed.
   */
  Traceparent: 'traceparent',
} as const;

/** Content type of a drive response: one JSON outcome per line. */
export const NDJSON = 'application/x-ndjson';

/**
 * Headers that carry credentials: redacted before anything is stored or shown. A runner adds its
 * own names (`RunnerOptions.redactHeaders`, `--redact-header`, `WF_REDACT_HEADERS`). The signatures
 * the runner itself sends are here too: each stays valid for a while, so one read from a run's log
 * could be replayed at its receiver (a drive, an Upstash delivery, an alert).
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  Header.Signature,
  /** A QStash delivery's JWT (runner-core/qstash/signature.ts). */
  'upstash-signature',
  /** An alert's signature (runner-core/alerts/signature.ts). */
  'wf-alert-signature',
]);

/** What a redacted header's value becomes. */
export const REDACTED = '[redacted]';

/** The built-in credential header names plus `extra` (any case), lower-case. */
export function credentialHeaderNames(extra: Iterable<string> = []): ReadonlySet<string> {
  const names = new Set(CREDENTIAL_HEADERS);
  for (const name of extra) if (name.trim() !== '') names.add(name.trim().toLowerCase());
  return names;
}

/**
 * Returns a copy of `headers` with credential values replaced by `[redacted]` (names compared
 * without case).
 * @example redactHeaders({ Authorization: 'Bearer s3cret', accept: '*' }) // { Authorization: '[redacted]', accept: '*' }
 */
export function redactHeaders(
  headers: Record<string, string>,
  names: ReadonlySet<string> = CREDENTIAL_HEADERS,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = names.has(name.toLowerCase()) ? REDACTED : value;
  }
  return out;
}

/** Plain object of a Headers instance (names lower-case). */
export function headersToObject(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}
