import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Whether an IP address is on the public internet: what a call target chosen by workflow code may
 * resolve to when its origin is not one the operator allowed. Everything that reaches this machine,
 * its network or its cloud's metadata service is not: loopback, private, link-local (169.254/16,
 * fe80::/10, where cloud metadata answers), CGNAT, unique-local, unspecified, multicast, reserved,
 * and the IPv4 forms wrapped in IPv6 (mapped, NAT64), judged by the IPv4 inside.
 */

const NOT_PUBLIC_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const NOT_PUBLIC_V6: readonly [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
];

const blocked = new BlockList();
for (const [network, prefix] of NOT_PUBLIC_V4) blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of NOT_PUBLIC_V6) blocked.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 one carries: `::ffff:a.b.c.d` (mapped), `::a.b.c.d` (compatible), `64:ff9b::/96` (NAT64). */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * True for an address on the public internet; false for anything local or reserved, and for
 * anything that is not an IP address at all.
 * @example isPublicAddress('93.184.215.14') // true
 * @example isPublicAddress('::ffff:127.0.0.1') // false
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return !blocked.check(bare, 'ipv4');
  if (!isIPv6(bare)) return false;
  const inner = embeddedV4(bare);
  if (inner !== undefined) return isIPv4(inner) && !blocked.check(inner, 'ipv4');
  // Whatever else is in ::/96 or ::ffff:0:0/96 (odd spellings of the forms above) is not public either.
  if (blocked.check(bare, 'ipv6') || /^::(ffff:)?[0-9a-f]{0,4}(:[0-9a-f]{0,4})?$/i.test(bare)) return false;
  return true;
}
