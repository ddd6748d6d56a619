/**
 * SHA-256 and the drive signature's HMAC, synchronous, on the host's own `node:crypto` (Node,
 * Bun, Deno, Workers with `nodejs_compat`), found with `process.getBuiltinModule` so that this
 * module imports nothing of Node and stays edge-safe. Web Crypto's digest and HMAC are each a trip
 * through the threadpool (a wakeup of the event loop, slow on a loaded machine), twice per drive
 * request on the route and once per signature on the runner; where the host has no `node:crypto`,
 * `signing.ts` still uses Web Crypto.
 */

interface Digest {
  update(data: string | Uint8Array): Digest;
  digest(): Uint8Array;
  digest(encoding: 'hex' | 'base64'): string;
}

/** The part of `node:crypto` used here. */
interface NodeCrypto {
  createHash(algorithm: 'sha256'): Digest;
  createHmac(algorithm: 'sha256', key: string | Uint8Array | object): Digest;
  createSecretKey(key: Uint8Array): object;
}

export interface SyncHmac {
  sha256Hex(body: string | Uint8Array): string;
  /** `v1,` + the base64 HMAC-SHA256 of `content` under the key derived from `token`. */
  signature(token: string, content: string): string;
}

function findNodeCrypto(): NodeCrypto | undefined {
  const g = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  try {
    const crypto = g.process?.getBuiltinModule?.('node:crypto') as Partial<NodeCrypto> | undefined;
    const complete =
      typeof crypto?.createHash === 'function' &&
      typeof crypto.createHmac === 'function' &&
      typeof crypto.createSecretKey === 'function';
    return complete ? (crypto as NodeCrypto) : undefined;
  } catch {
    return undefined;
  }
}

function hmacOn(crypto: NodeCrypto, label: string): SyncHmac {
  // A key object per token: HMAC with a raw key prepares the key again at every call (5x slower).
  const keys = new Map<string, object>();
  const keyFor = (token: string): object => {
    let key = keys.get(token);
    if (!key) {
      key = crypto.createSecretKey(crypto.createHmac('sha256', token).update(label).digest());
      keys.set(token, key);
    }
    return key;
  };
  return {
    sha256Hex: (body) => crypto.createHash('sha256').update(body).digest('hex'),
    signature: (token, content) => 'v1,' + crypto.createHmac('sha256', keyFor(token)).update(content).digest('base64'),
  };
}

/**
 * The synchronous hash and HMAC (keys derived as HMAC-SHA256(token, `label`)), or undefined on a
 * host without `node:crypto` (use Web Crypto there).
 */
export function createSyncHmac(label: string): SyncHmac | undefined {
  const crypto = findNodeCrypto();
  return crypto && hmacOn(crypto, label);
}
