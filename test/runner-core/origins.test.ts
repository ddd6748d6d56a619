import { describe, expect, it } from 'vitest';
import {
  LOOPBACK_ORIGINS,
  originAllowed,
  parseOriginPattern,
  parseOriginPatterns,
  splitOriginList,
} from '../../runner-core/egress/origins.js';

describe('parseOriginPattern', () => {
  it.each([
    ['https://app.example.com', { scheme: 'https', host: 'app.example.com', subdomains: false, port: null }],
    ['HTTPS://App.Example.com/', { scheme: 'https', host: 'app.example.com', subdomains: false, port: null }],
    ['https://*.example.com', { scheme: 'https', host: 'example.com', subdomains: true, port: null }],
    ['http://127.0.0.1:*', { scheme: 'http', host: '127.0.0.1', subdomains: false, port: '*' }],
    ['http://[::1]:3000', { scheme: 'http', host: '[::1]', subdomains: false, port: 3000 }],
    ['  http://localhost:8787  ', { scheme: 'http', host: 'localhost', subdomains: false, port: 8787 }],
  ])('%s', (text, expected) => {
    expect(parseOriginPattern(text)).toMatchObject(expected);
  });

  it.each([
    'app.example.com',
    'ftp://example.com',
    'https://example.com/api',
    'https://*',
    'https://a.*.com',
    'http://localhost:0',
    'http://localhost:70000',
    'https://user@example.com',
    '',
  ])('refuses %j, naming it and the expected shape', (text) => {
    expect(() => parseOriginPattern(text)).toThrow(`got "${text}"`);
    expect(() => parseOriginPattern(text)).toThrow('https://*.example.com');
  });
});

describe('originAllowed', () => {
  const patterns = parseOriginPatterns([
    'https://app.example.com',
    'https://*.tenant.io',
    'http://127.0.0.1:*',
    'http://10.0.0.5:8080',
  ]);
  it.each([
    ['https://app.example.com/api/wf', true],
    ['https://app.example.com:443/api/wf', true],
    ['https://APP.example.com/x', true],
    ['https://app.example.com:8443/api/wf', false],
    ['http://app.example.com/api/wf', false],
    ['https://evil.app.example.com/x', false],
    ['https://app.example.com.evil.com/x', false],
    ['https://a.tenant.io/x', true],
    ['https://a.b.tenant.io/x', true],
    ['https://tenant.io/x', false],
    ['https://eviltenant.io/x', false],
    ['http://127.0.0.1:3000/workflow', true],
    ['http://127.0.0.1/workflow', true],
    ['http://127.0.0.2:3000/workflow', false],
    ['http://10.0.0.5:8080/wf', true],
    ['http://10.0.0.5/wf', false],
    ['http://169.254.169.254/latest/meta-data', false],
    ['file:///etc/passwd', false],
    ['not a url', false],
  ])('%s → %s', (url, allowed) => {
    expect(originAllowed(url, patterns)).toBe(allowed);
  });

  it('an explicit default port in the pattern matches the URL without one', () => {
    expect(originAllowed('https://a.com/x', parseOriginPatterns(['https://a.com:443']))).toBe(true);
    expect(originAllowed('http://a.com/x', parseOriginPatterns(['http://a.com:80']))).toBe(true);
  });

  it('loopback defaults: localhost, 127.0.0.1 and ::1 on any port, over http', () => {
    const loopback = parseOriginPatterns(LOOPBACK_ORIGINS);
    for (const url of ['http://localhost:3000/a', 'http://127.0.0.1:8787/a', 'http://[::1]:5173/a'])
      expect(originAllowed(url, loopback), url).toBe(true);
    for (const url of ['https://localhost:3000/a', 'http://192.168.1.2:3000/a', 'http://localhost.evil.com/a'])
      expect(originAllowed(url, loopback), url).toBe(false);
  });

  it('nothing is allowed by an empty list', () => {
    expect(originAllowed('http://127.0.0.1:3000/a', [])).toBe(false);
  });
});

describe('splitOriginList', () => {
  it('splits WF_ALLOWED_ORIGINS on commas and spaces', () => {
    expect(splitOriginList(' https://a.com, https://*.b.com  http://127.0.0.1:*,,')).toEqual([
      'https://a.com',
      'https://*.b.com',
      'http://127.0.0.1:*',
    ]);
    expect(splitOriginList(undefined)).toEqual([]);
  });
});
