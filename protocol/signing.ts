import { WorkflowError } from './errors.js';
import { Header } from './headers.js';
import { createSyncHmac } from './sync-hmac.js';

/**
 * Runner -> route request signing, Standard-Webhooks style, on Web Crypto only (Node, Workers,
 * browsers). Signed content: `id.timestamp.deadline.url.sha256hex(body)`: the deadline (epoch ms)
 * bounds how late the request may arrive and how long the route may keep starting steps for it,
 * so a drive the runner gave up on (and retried) cannot run committed steps again. The HMAC key is derived from the
 * token, so an app needs no second secret; several signatures may share one header so a runner can
 * sign with the current and the next token during a rotation. The route checks the headers' shape
 * first (`checkSignatureClaim`, before reading any body), then the HMAC over its own configured URL
 * only, so a drive relayed to another app with the same token (and a rewritten Host) fails.
 */

/** How far a signature's timestamp may be from now. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;
/** The deadline `signRequest` sets when none is given: the runner's default drive timeout. */
export const DEFAULT_DEADLINE_MS = 30_000;
/** The derived signing key is HMAC-SHA256(token, this label). */
export const SIGNING_KEY_LABEL = 'wfkit-signing-v1';
/** node:crypto's hash and HMAC where the host has them (synchronous, no threadpool trip); else Web Crypto. */
export const syncSigning = createSyncHmac(SIGNING_KEY_LABEL);
const encoder = new TextEncoder();
const keyCache = new Map<string, Promise<CryptoKey>>();

function toBase64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary);
}

function toHex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function hmacKey(secret: BufferSource): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

/** The signing key for a token: HMAC-SHA256(token, label), memoized per token. */
function signingKey(token: string): Promise<CryptoKey> {
  let key = keyCache.get(token);
  if (!key) {
    key = (async () => {
      const derived = await crypto.subtle.sign(
        'HMAC',
        await hmacKey(encoder.encode(token)),
        encoder.encode(SIGNING_KEY_LABEL),
      );
      return hmacKey(derived);
    })();
    keyCache.set(token, key);
  }
  return key;
}

export async function sha256Hex(body: string | Uint8Array): Promise<string> {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  return toHex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

async function signature(token: string, content: string): Promise<string> {
  return 'v1,' + toBase64(await crypto.subtle.sign('HMAC', await signingKey(token), encoder.encode(content)));
}

export interface SignOptions {
  url: string;
  body: string;
  /** Every token to sign with (current first); each adds one signature. */
  tokens: readonly string[];
  id?: string;
  /** Unix seconds. @default now */
  timestamp?: number;
  /** Epoch ms after which the route refuses the request and starts no new step. @default timestamp + 30 s */
  deadline?: number;
}

/** The signed content: one definition, shared by both signers and the verifier. */
export function signedContent(
  id: string,
  timestamp: number | string,
  deadline: number | string,
  url: string,
  bodyHash: string,
): string {
  return `${id}.${timestamp}.${deadline}.${url}.${bodyHash}`;
}

/** The four signature headers for one request. */
export async function signRequest(options: SignOptions): Promise<Record<string, string>> {
  const id = options.id ?? crypto.randomUUID();
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const deadline = options.deadline ?? timestamp * 1000 + DEFAULT_DEADLINE_MS;
  const content = signedContent(id, timestamp, deadline, options.url, await sha256Hex(options.body));
  const signatures = await Promise.all(options.tokens.map((token) => signature(token, content)));
  return {
    [Header.SignatureId]: id,
    [Header.SignatureTimestamp]: String(timestamp),
    [Header.Deadline]: String(deadline),
    [Header.Signature]: signatures.join(' '),
  };
}

/** The four signature headers; a request carrying any of them claims to come from the runner. */
const SIGNATURE_HEADERS = [Header.SignatureId, Header.SignatureTimestamp, Header.Deadline, Header.Signature] as const;

/** True when a request carries any signature header (a drive request, or one claiming to be; not a start). */
export function hasSignature(headers: Headers): boolean {
  return SIGNATURE_HEADERS.some((name) => headers.has(name));
}

/** Most signatures one header may carry: a rotation needs two; a few spare for overlapping rotations. */
export const MAX_SIGNATURES = 8;
/** Message ids: a UUID from the runner, `msg_…` style elsewhere; bounded and free of the `.` separator. */
const ID_PATTERN = /^[A-Za-z0-9_:-]{1,128}$/;
/** `v1,` + the base64 of a 32-byte HMAC-SHA256 (43 characters and one `=`). */
const SIGNATURE_PATTERN = /^v1,[A-Za-z0-9+/]{43}=$/;

/** The signature headers of a request, checked for presence and shape (not yet for the HMAC). */
export interface SignatureClaim {
  id: string;
  /** As sent: the signed content uses the text. */
  timestamp: string;
  deadlineText: string;
  /** Epoch ms: start no new step after it. */
  deadline: number;
  signatures: string[];
}

export interface ClaimOptions {
  /** Unix seconds, for the timestamp window. @default now */
  now?: number;
  /** Epoch ms, for the deadline. @default `now` in ms, else Date.now() */
  nowMs?: number;
}

const shapeError = (message: string): WorkflowError => new WorkflowError('SIGNATURE', message);

/**
 * Checks what can be checked without the body: all four headers, a sane id, a timestamp inside the
 * window, a deadline not past, and a bounded list of `v1,<base64 of 32 bytes>`. Cheap by design,
 * so the route refuses a request that only claims a signature (401) before reading its body.
 * Throws `WorkflowError` code `SIGNATURE`.
 */
export function checkSignatureClaim(headers: Headers, options: ClaimOptions = {}): SignatureClaim {
  const id = headers.get(Header.SignatureId);
  const timestamp = headers.get(Header.SignatureTimestamp);
  const deadlineText = headers.get(Header.Deadline);
  const header = headers.get(Header.Signature);
  if (!id || !timestamp || !deadlineText || !header) {
    throw shapeError(
      `Unsigned request: expected the ${SIGNATURE_HEADERS.join(', ')} headers, got ${SIGNATURE_HEADERS.filter((name) => headers.has(name)).join(', ') || 'none'}.`,
    );
  }
  if (!ID_PATTERN.test(id))
    throw shapeError(
      `Expected ${Header.SignatureId} to be 1 to 128 letters, digits, "_", ":" or "-", got a value of ${id.length} characters that is not.`,
    );
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!(Math.abs(now - seconds) <= SIGNATURE_TOLERANCE_SECONDS)) {
    throw shapeError(
      `Signature timestamp ${JSON.stringify(timestamp.slice(0, 20))} is outside the ±${SIGNATURE_TOLERANCE_SECONDS}s window around ${now} (unix seconds).`,
    );
  }
  const deadline = /^\d{1,16}$/.test(deadlineText) ? Number(deadlineText) : Number.NaN;
  if (!Number.isSafeInteger(deadline))
    throw shapeError(
      `Expected ${Header.Deadline} to be epoch milliseconds, got ${JSON.stringify(deadlineText.slice(0, 20))}.`,
    );
  const nowMs = options.nowMs ?? (options.now === undefined ? Date.now() : options.now * 1000);
  if (nowMs > deadline) {
    // Not a bad signature: the request was slow to arrive. Its own code, so the route answers 408
    // and the runner takes it for a transport delay, not for a broken app.
    throw new WorkflowError(
      'LATE',
      `Late request: its deadline passed ${nowMs - deadline} ms ago, so the runner no longer waits for it (it retries on its own; if every request is late, check that this host's clock agrees with the runner's).`,
    );
  }
  const signatures = header.split(' ');
  if (signatures.length > MAX_SIGNATURES || !signatures.every((s) => SIGNATURE_PATTERN.test(s))) {
    throw shapeError(
      `Expected ${Header.Signature} to be 1 to ${MAX_SIGNATURES} space-separated "v1,<base64 of 32 bytes>" values, got ${signatures.length} value(s) not all of that shape.`,
    );
  }
  return { id, timestamp, deadlineText, deadline, signatures };
}

export interface VerifyOptions extends ClaimOptions {
  headers: Headers;
  body: string;
  /** URLs the runner may have signed. The route passes only its own configured identity. */
  urls: readonly string[];
  token: string;
}

/** What a verified request was signed with. */
export interface VerifiedRequest {
  /** Epoch ms: start no new step after it. */
  deadline: number;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Throws `WorkflowError` code `SIGNATURE` unless the claim is well formed (`checkSignatureClaim`) and
 * one signature matches one of `urls` within the time window and before the signed deadline;
 * returns that deadline.
 */
export async function verifyRequest(options: VerifyOptions): Promise<VerifiedRequest> {
  const claim = checkSignatureClaim(options.headers, options);
  const bodyHash = syncSigning ? syncSigning.sha256Hex(options.body) : await sha256Hex(options.body);
  for (const url of new Set(options.urls)) {
    const content = signedContent(claim.id, claim.timestamp, claim.deadlineText, url, bodyHash);
    const expected = syncSigning
      ? syncSigning.signature(options.token, content)
      : await signature(options.token, content);
    if (claim.signatures.some((s) => constantTimeEqual(s, expected))) return { deadline: claim.deadline };
  }
  const where = options.urls.length === 1 ? ` over this route's URL ${options.urls[0]}` : '';
  throw new WorkflowError(
    'SIGNATURE',
    `Invalid signature: no signature matches this route's token${where} (is WF_TOKEN the same for the app and the runner, and is that the URL the runner calls?).`,
  );
}
