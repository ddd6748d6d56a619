import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { buildConnector as Connector } from 'undici';
import { buildConnector } from './undici-parts.js';
import type { OriginPattern } from './origins.js';
import { originAllowed } from './origins.js';
import { EgressRefusedError } from './destinations.js';
import { isPublicAddress } from './public-address.js';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function refused(hostname: string, address: string): EgressRefusedError {
  return new EgressRefusedError(
    'call',
    hostname,
    `${hostname} resolves to ${address}, which is not a public address, and its origin is not an allowed one`,
  );
}

/**
 * A DNS lookup that answers only public addresses: the connection is made to the address it
 * returns, so a name that resolves to a public address when checked and to 127.0.0.1 when
 * connecting (DNS rebinding) cannot get through. With `all` (happy eyeballs), the private
 * addresses of a mixed answer are dropped; none left is a refusal.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const usable = addresses.filter((a) => isPublicAddress(a.address));
    if (usable.length === 0) return callback(refused(hostname, addresses[0]?.address ?? 'nothing'), '');
    if (options.all) return callback(null, usable);
    callback(null, usable[0]!.address, usable[0]!.family);
  });
}

/**
 * The connector of the gate's call agent: a connection to an origin the operator allowed is made
 * as any other; to any other origin, only to a public address (a literal IP is checked here, as
 * node does no lookup for one; a name through `publicOnlyLookup`). `allowed` is the runner's own
 * list, read at each connect (`wf dev` adds its tunnel's origin later).
 */
export function callConnector(allowed: readonly OriginPattern[], connectTimeoutMs: number): Connector.connector {
  const plain = buildConnector({ timeout: connectTimeoutMs });
  const checked = buildConnector({
    timeout: connectTimeoutMs,
    lookup: publicOnlyLookup,
  } as Connector.BuildOptions);
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    const port = options.port === '' || options.port === undefined ? '' : `:${options.port}`;
    const origin = `${options.protocol}//${host.includes(':') ? `[${host}]` : host}${port}`;
    if (originAllowed(origin, allowed)) return plain(options, callback);
    if (isIP(host) !== 0 && !isPublicAddress(host)) {
      const error = new EgressRefusedError(
        'call',
        origin,
        `${host} is not a public address, and the origin is not an allowed one`,
      );
      // undici's connector contract: the callback, not a throw (it may be called synchronously).
      return callback(error, null);
    }
    return checked(options, callback);
  };
}
