import { randomUUID } from 'node:crypto';
import { Header } from '../../protocol/headers.js';
import { signedContent, syncSigning } from '../../protocol/signing.js';

/**
 * The runner's side of `protocol/signing.ts`: the same signed content and key derivation, on
 * node:crypto through `syncSigning` (synchronous; Web Crypto goes through the threadpool, about
 * 0.08 ms a call against a few µs here), since the runner signs every drive request.
 * `test/runner-core/sign.test.ts` proves the route's verifier accepts these signatures.
 */
const signing = syncSigning ?? missingNodeCrypto();

function missingNodeCrypto(): never {
  throw new Error('Expected node:crypto (process.getBuiltinModule) in the runner, found none.');
}

/** Signs a drive request that the route must receive, and start its last new step, by `deadline` (epoch ms). */
export function signDrive(
  url: string,
  body: string,
  tokens: readonly string[],
  deadline: number,
  timestamp = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const id = randomUUID();
  const content = signedContent(id, timestamp, deadline, url, signing.sha256Hex(body));
  return {
    [Header.SignatureId]: id,
    [Header.SignatureTimestamp]: String(timestamp),
    [Header.Deadline]: String(deadline),
    [Header.Signature]: tokens.map((token) => signing.signature(token, content)).join(' '),
  };
}
