import { WorkflowError } from './errors.js';
import { Header } from './headers.js';

/**
 * Runner -> route request signing, Standard-Webhooks style, on Web Crypto only (Node, Workers,
 * browsers). Signed content: `id.timestamp.url.sha256hex(body)`. The HMAC key is derived from the
 * token, so an app needs no second secret; several signatures may share one header so a runner can
 * sign with the current and the next token during a rotation.
 */

/** How far a signature's timestamp may be from now. */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;
/** The derived signing key is HMAC-SHA256(token, this label). */
export const SIGNING_KEY_LABEL = 'wfkit-signing-v1';
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
      const derived = await crypto.subtle.sign('HMAC', await hmacKey(encoder.encode(token)), encoder.encode(SIGNING_KEY_LABEL));
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
}

/** The three signature headers for one request. */
export async function signRequest(options: SignOptions): Promise<Record<string, string>> {
  const id = options.id ?? crypto.randomUUID();
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const content = `${id}.${timestamp}.${options.url}.${await sha256Hex(options.body)}`;
  const signatures = await Promise.all(options.tokens.map((token) => signature(token, content)));
  return {
    [Header.SignatureId]: id,
    [Header.SignatureTimestamp]: String(timestamp),
    [Header.Signature]: signatures.join(' '),
  };
}

/** True when a request carries signature headers at all (a drive request, not a start). */
export function hasSignature(headers: Headers): boolean {
  return headers.has(Header.Signature) || headers.has(Header.SignatureId);
}

export interface VerifyOptions {
  headers: Headers;
  body: string;
  /** URLs the runner may have signed: the route's public URL and the URL it was reached at. */
  urls: readonly string[];
  token: string;
  /** Unix seconds. @default now */
  now?: number;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Throws `WorkflowError` code `SIGNATURE` unless one signature matches within the time window. */
export async function verifyRequest(options: VerifyOptions): Promise<void> {
  const id = options.headers.get(Header.SignatureId);
  const timestamp = options.headers.get(Header.SignatureTimestamp);
  const header = options.headers.get(Header.Signature);
  if (!id || !timestamp || !header) {
    throw new WorkflowError('SIGNATURE', `Unsigned request: expected the ${Header.SignatureId}, ${Header.SignatureTimestamp} and ${Header.Signature} headers.`);
  }
  const seconds = Number(timestamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(seconds) || Math.abs(now - seconds) > SIGNATURE_TOLERANCE_SECONDS) {
    throw new WorkflowError('SIGNATURE', `Signature timestamp ${timestamp} is outside the ±${SIGNATURE_TOLERANCE_SECONDS}s window around ${now}.`);
  }
  const offered = header.split(' ').filter((s) => s.startsWith('v1,'));
  const bodyHash = await sha256Hex(options.body);
  for (const url of new Set(options.urls)) {
    const expected = await signature(options.token, `${id}.${timestamp}.${url}.${bodyHash}`);
    if (offered.some((s) => constantTimeEqual(s, expected))) return;
  }
  throw new WorkflowError('SIGNATURE', 'Invalid signature: no signature matches this route\'s token (is WF_TOKEN the same for the app and the runner?).');
}
