import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { originAllowed, type OriginPattern } from './origins.js';
import { EgressRefusedError } from './destinations.js';
import { isPublicAddress } from './public-address.js';

/**
 * Refuses, before anything is stored, a call target the gate would refuse when sending it (the
 * QStash API's `toCallback` publish answers 403 then, as for any origin not allowed): an origin
 * nobody allowed whose host is a literal non-public address, or a name all of whose addresses are
 * non-public. A name that does not resolve now is let through (it may later; the gate checks the
 * address it connects to, at connect time, whatever this said).
 * @example await checkCallTarget('http://169.254.169.254/latest/meta-data', allowed) // throws EgressRefusedError
 */
export async function checkCallTarget(url: string, allowed: readonly OriginPattern[]): Promise<void> {
  if (originAllowed(url, allowed)) return;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return; // the message's own parser has already refused what is no URL
  }
  const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host))
      throw new EgressRefusedError(
        'call',
        target.origin,
        `${host} is not a public address, and the origin is not an allowed one`,
      );
    return;
  }
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return;
  }
  if (addresses.length > 0 && !addresses.some((a) => isPublicAddress(a.address))) {
    throw new EgressRefusedError(
      'call',
      target.origin,
      `${host} resolves to ${addresses[0]!.address}, which is not a public address, and the origin is not an allowed one`,
    );
  }
}
