import { describe, expect, it } from 'vitest';
import { redactHeaders } from '../../protocol/headers.js';
import type { CallRequest } from '../../protocol/messages.js';
import { decodeOutcome, encodeOutcome, type Outcome } from '../../protocol/outcome.js';
import {
  CallCredentials,
  CredentialsError,
  publicStep,
  type StoredCallRequest,
} from '../../runner-core/drive/call-credentials.js';
import type { Step } from '../../runner-core/store/types.js';

const request: CallRequest = {
  url: 'https://api.example.com/v1/charge',
  method: 'POST',
  headers: {
    Authorization: 'Bearer auth-secret',
    cookie: 'sid=cookie-secret',
    'X-Api-Key': 'key-secret',
    'x-tenant': 'tenant-secret',
    accept: 'application/json',
  },
  body: '{}',
};
const SECRETS = ['auth-secret', 'cookie-secret', 'key-secret'];

describe('redactHeaders (protocol)', () => {
  it('redacts the built-in credential headers in any case, and keeps the rest', () => {
    expect(
      redactHeaders({
        AUTHORIZATION: 'a',
        'Set-Cookie': 'b',
        'x-api-key': 'c',
        'proxy-authorization': 'd',
        'x-other': 'e',
      }),
    ).toEqual({
      AUTHORIZATION: '[redacted]',
      'Set-Cookie': '[redacted]',
      'x-api-key': '[redacted]',
      'proxy-authorization': '[redacted]',
      'x-other': 'e',
    });
  });
});

describe('CallCredentials', () => {
  const credentials = new CallCredentials(['token-new', 'token-old'], ['X-Tenant']);

  it('stores the request with credential values redacted (the configured names too), the real ones only sealed', () => {
    const stored = credentials.seal(request);
    expect(stored.headers).toEqual({
      Authorization: '[redacted]',
      cookie: '[redacted]',
      'X-Api-Key': '[redacted]',
      'x-tenant': '[redacted]',
      accept: 'application/json',
    });
    expect(stored.sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    const text = JSON.stringify(stored);
    for (const secret of [...SECRETS, 'tenant-secret']) expect(text).not.toContain(secret);
  });

  it('opens what it sealed, with the names as the workflow wrote them', () => {
    expect(credentials.open(credentials.seal(request))).toEqual(request);
  });

  it('leaves a request without credentials as it is', () => {
    const plain = { url: 'http://x.test/', method: 'GET', headers: { accept: '*/*' } };
    expect(credentials.seal(plain)).toBe(plain);
  });

  it('opens with any configured token (rotation), and refuses when none sealed it', () => {
    const sealedByOld = new CallCredentials(['token-old']).seal(request);
    expect(credentials.open(sealedByOld)).toEqual(
      expect.objectContaining({ headers: expect.objectContaining({ Authorization: 'Bearer auth-secret' }) }),
    );
    expect(() => new CallCredentials(['token-other']).open(sealedByOld)).toThrow(CredentialsError);
  });

  it('opens only for the request it was sealed with (URL bound), and not once altered', () => {
    const stored = credentials.seal(request);
    expect(() => credentials.open({ ...stored, url: 'https://evil.example.com/' })).toThrow(
      /None of the runner's 2 token\(s\) opens/,
    );
    const last = stored.sealed!.at(-1) === 'A' ? 'B' : 'A';
    expect(() => credentials.open({ ...stored, sealed: stored.sealed!.slice(0, -1) + last })).toThrow(CredentialsError);
    expect(() => credentials.open({ ...stored, sealed: 'v0.abc' })).toThrow('to start with "v1."');
  });

  it('seals a suspend line for the commit, and redacts it without the sealed value for the log', () => {
    const outcome: Outcome = {
      t: 'suspend',
      steps: [
        { kind: 'call', index: 0, name: 'charge', group: 1, request },
        { kind: 'sleep', index: 1, name: 'nap', group: 1, until: 5 },
      ],
    };
    const sealed = credentials.sealOutcome(outcome);
    expect(
      sealed.t === 'suspend' &&
        sealed.steps[0]?.kind === 'call' &&
        (sealed.steps[0].request as StoredCallRequest).sealed,
    ).toMatch(/^v1\./);
    const line = encodeOutcome(outcome).trimEnd();
    const logged = credentials.logLine(line, outcome);
    for (const secret of SECRETS) expect(logged).not.toContain(secret);
    expect(logged).not.toContain('v1.');
    expect(decodeOutcome(logged)).toMatchObject({
      t: 'suspend',
      steps: [{ request: { headers: { Authorization: '[redacted]', accept: 'application/json' } } }, { kind: 'sleep' }],
    });
    const done = '{"t":"done"}';
    expect(credentials.logLine(done, decodeOutcome(done))).toBe(done);
  });

  it('publicStep drops the sealed value from what the API and the events serve', () => {
    const step = { kind: 'call', request: credentials.seal(request) } as unknown as Step;
    const shown = publicStep(step);
    expect(shown.request).not.toHaveProperty('sealed');
    expect(shown.request?.headers.Authorization).toBe('[redacted]');
    expect((step.request as StoredCallRequest).sealed).toBeDefined();
  });
});
