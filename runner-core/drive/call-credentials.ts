import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { credentialHeaderNames, redactHeaders } from '../../protocol/headers.js';
import type { CallRequest, InvokeRequest } from '../../protocol/messages.js';
import { encodeOutcome, type Outcome, type Suspension } from '../../protocol/outcome.js';
import { invokeAsCallRequest } from './invoke.js';
import { WorkflowError } from '../../protocol/errors.js';
import type { Change, Step } from '../store/types.js';

/**
 * Credential headers of `context.call` exchanges (and of starts and drive logs), kept out of
 * everything the runner stores or shows.
 *
 * A call's request is stored with its credential values replaced by `[redacted]`; the real values
 * go, sealed, into the same record's `sealed` field, so the runner can still make the call after a
 * restart (or on another runner sharing the database). Sealing is AES-256-GCM with a key derived
 * (HKDF-SHA256, labelled) from the runner's current token; opening tries every configured token, so
 * a rotation keeps working while the old token is still configured. The method and URL are bound
 * as associated data: a sealed value opens only for the request it came with. `publicStep` drops
 * the field from everything the API and the event stream serve: whoever holds a token could open it.
 */

/** A call's sealed credentials cannot be opened: no configured token sealed them, or they were altered. */
export class CredentialsError extends WorkflowError {
  override name = 'CredentialsError';
  constructor(message: string) {
    super('RUNNER', message);
  }
}

/** The sealed field of a stored call request: `v1.<base64url of iv ‖ ciphertext ‖ tag>`. */
export type StoredCallRequest = CallRequest & { sealed?: string };

const KEY_LABEL = 'wfkit call credentials v1';
const VERSION = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const deriveKey = (token: string): Buffer => Buffer.from(hkdfSync('sha256', token, '', KEY_LABEL, 32));
const boundTo = (request: CallRequest): Buffer => Buffer.from(`${request.method.toUpperCase()} ${request.url}`);

export class CallCredentials {
  /** Lower-case names whose values are redacted: the built-in list plus the runner's own. */
  readonly names: ReadonlySet<string>;
  private readonly keys: readonly Buffer[];

  constructor(tokens: readonly string[], extraNames: readonly string[] = []) {
    this.names = credentialHeaderNames(extraNames);
    this.keys = tokens.map(deriveKey);
    if (this.keys.length === 0) throw new Error('Expected at least one token to seal call credentials with, got none.');
  }

  redact(headers: Record<string, string>): Record<string, string> {
    return redactHeaders(headers, this.names);
  }

  /**
   * `changes` as they may be recorded: every attempt's request and response headers redacted. The
   * runner's commit passes everything through here, so a send site that logs headers as it sent
   * them (a signature it added itself) cannot put a credential in the store, the API or the events.
   */
  redactAttempts(changes: readonly Change[]): readonly Change[] {
    if (!changes.some((change) => change.type === 'attempt')) return changes;
    return changes.map((change) => {
      if (change.type !== 'attempt') return change;
      const { requestHeaders, responseHeaders } = change.attempt;
      return {
        ...change,
        attempt: {
          ...change.attempt,
          requestHeaders: this.redact(requestHeaders),
          responseHeaders: responseHeaders && this.redact(responseHeaders),
        },
      };
    });
  }

  /** The request as it is stored: credential values redacted, the real ones sealed beside them. */
  seal(request: CallRequest): StoredCallRequest {
    const secret = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => this.names.has(name.toLowerCase())),
    );
    if (Object.keys(secret).length === 0) return request;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0]!, iv).setAAD(boundTo(request));
    const sealed = Buffer.concat([
      iv,
      cipher.update(JSON.stringify(secret), 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return { ...request, headers: this.redact(request.headers), sealed: VERSION + sealed.toString('base64url') };
  }

  /** The request as the runner sends it: the sealed values back in place. Throws `CredentialsError`. */
  open(stored: StoredCallRequest): CallRequest {
    const { sealed, ...request } = stored;
    if (sealed === undefined) return request;
    const where = `the sealed credentials of call ${request.method} ${request.url}`;
    if (!sealed.startsWith(VERSION))
      throw new CredentialsError(`Expected ${where} to start with "${VERSION}", got "${sealed.slice(0, 8)}…".`);
    const bytes = Buffer.from(sealed.slice(VERSION.length), 'base64url');
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(boundTo(request));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
        return { ...request, headers: { ...request.headers, ...(JSON.parse(plain) as Record<string, string>) } };
      } catch {
        // Sealed with another token (or altered): try the next one.
      }
    }
    throw new CredentialsError(
      `None of the runner's ${this.keys.length} token(s) opens ${where}: it was sealed with a token no longer configured (add it back beside the new one while such calls are pending).`,
    );
  }

  /** A terminal `suspend` with its calls sealed, as it is committed; any other outcome unchanged. */
  sealOutcome<T extends Outcome>(outcome: T): T {
    if (outcome.t !== 'suspend') return outcome;
    return {
      ...outcome,
      // Whatever kind carries a request (a call's, an invoke's child start) has its headers sealed,
      // in the call shape it is stored in (an invoke's is converted; a call's is kept as it is).
      steps: outcome.steps.map((s) =>
        carriesRequest(s) ? ({ ...s, request: this.seal(invokeAsCallRequest(s.request)) } as Suspension) : s,
      ),
    };
  }

  /** The drive response line as the attempt log keeps it: a suspend's call credentials redacted. */
  logLine(line: string, outcome: Outcome): string {
    const carries = (s: Suspension): boolean =>
      carriesRequest(s) && Object.keys(s.request.headers).some((n) => this.names.has(n.toLowerCase()));
    if (outcome.t !== 'suspend' || !outcome.steps.some(carries)) return line;
    const redacted: Outcome = {
      ...outcome,
      steps: outcome.steps.map((s) =>
        carriesRequest(s)
          ? ({ ...s, request: { ...s.request, headers: this.redact(s.request.headers) } } as Suspension)
          : s,
      ),
    };
    return encodeOutcome(redacted).trimEnd();
  }
}

/** A suspension that carries a request with headers (a call, an invoke's child start), whatever its kind. */
function carriesRequest(s: Suspension): s is Suspension & { request: CallRequest | InvokeRequest } {
  return 'request' in s && typeof s.request === 'object' && s.request !== null;
}

/** A step as the API and the event stream serve it: without its call's sealed credentials. */
export function publicStep(step: Step): Step {
  const request = step.request as StoredCallRequest | null;
  if (request?.sealed === undefined) return step;
  const { sealed: _sealed, ...shown } = request;
  return { ...step, request: shown };
}
