import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../runner-core/egress/public-address.js';

/** Which addresses a call target chosen by workflow code may resolve to (egress/public-address.ts). */
describe('isPublicAddress', () => {
  it.each([
    ['93.184.215.14', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['127.0.0.2', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false], // cloud metadata
    ['100.64.0.1', false], // CGNAT
    ['100.128.0.1', true],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['[::1]', false],
    ['fe80::1', false],
    ['fd00::1', false], // unique-local
    ['fc00::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false], // IPv4-mapped
    ['::ffff:7f00:1', false], // the same, in hex
    ['::ffff:169.254.169.254', false],
    ['::ffff:a9fe:a9fe', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a9fe:a9fe', false], // NAT64 of 169.254.169.254
    ['::127.0.0.1', false], // IPv4-compatible
    ['localhost', false],
    ['not an address', false],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
