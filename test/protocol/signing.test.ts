import { describe, expect, it } from 'vitest';
import { WorkflowError } from '../../protocol/errors.js';
import { Header } from '../../protocol/headers.js';
import {
  checkSignatureClaim,
  hasSignature,
  MAX_SIGNATURES,
  sha256Hex,
  signRequest,
  SIGNATURE_TOLERANCE_SECONDS,
  verifyRequest,
  type VerifyOptions,
} from '../../protocol/signing.js';

const URL_A = 'https://app.example.com/api/workflow';
const BODY = JSON.stringify({ v: 1, runId: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B', body: '{"text":"ü"}' });
const NOW = 1_750_000_000;

async function signed(
  tokens: string[],
  overrides: { url?: string; body?: string; timestamp?: number; deadline?: number } = {},
): Promise<Headers> {
  const deadline = overrides.deadline ?? NOW * 1000 + 60_000;
  return new Headers(
    await signRequest({
      url: overrides.url ?? URL_A,
      body: overrides.body ?? BODY,
      tokens,
      timestamp: overrides.timestamp ?? NOW,
      deadline,
      id: 'msg_1',
    }),
  );
}

function verify(options: Partial<VerifyOptions> & { headers: Headers }): Promise<unknown> {
  return verifyRequest({ body: BODY, urls: [URL_A], token: 'token-a', now: NOW, ...options });
}

async function signatureError(promise: Promise<unknown>, code = 'SIGNATURE'): Promise<WorkflowError> {
  const error: unknown = await promise.then(
    () => {
      throw new Error('Expected verification to fail, it passed.');
    },
    (e: unknown) => e,
  );
  expect(WorkflowError.is(error)).toBe(true);
  expect((error as WorkflowError).code).toBe(code);
  return error as WorkflowError;
}

describe('signRequest', () => {
  it('sets the id, the timestamp and one v1 signature per token', async () => {
    const headers = await signRequest({
      url: URL_A,
      body: BODY,
      tokens: ['token-a', 'token-b'],
      timestamp: NOW,
      id: 'msg_1',
    });
    expect(headers[Header.SignatureId]).toBe('msg_1');
    expect(headers[Header.SignatureTimestamp]).toBe(String(NOW));
    const signatures = headers[Header.Signature]!.split(' ');
    expect(signatures).toHaveLength(2);
    for (const s of signatures) expect(s).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(signatures[0]).not.toBe(signatures[1]);
  });

  it('defaults to a fresh id and the current time', async () => {
    const [a, b] = await Promise.all([
      signRequest({ url: URL_A, body: BODY, tokens: ['t'] }),
      signRequest({ url: URL_A, body: BODY, tokens: ['t'] }),
    ]);
    expect(a[Header.SignatureId]).not.toBe(b[Header.SignatureId]);
    expect(Math.abs(Number(a[Header.SignatureTimestamp]) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('is deterministic for the same input', async () => {
    expect(await signed(['token-a'])).toEqual(await signed(['token-a']));
  });

  it('hashes bodies with SHA-256', async () => {
    expect(await sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(await sha256Hex(new TextEncoder().encode('abc'))).toBe(await sha256Hex('abc'));
  });
});

describe('verifyRequest', () => {
  it('accepts a request it signed', async () => {
    await expect(verify({ headers: await signed(['token-a']) })).resolves.toBeDefined();
    await expect(
      verifyRequest({
        headers: await signed(['token-a'], { timestamp: Math.floor(Date.now() / 1000), deadline: Date.now() + 30_000 }),
        body: BODY,
        urls: [URL_A],
        token: 'token-a',
      }),
    ).resolves.toBeDefined();
  });

  it('accepts the current and the next token during a rotation', async () => {
    const headers = await signed(['token-a', 'token-b']);
    await expect(verify({ headers, token: 'token-a' })).resolves.toBeDefined();
    await expect(verify({ headers, token: 'token-b' })).resolves.toBeDefined();
    await signatureError(verify({ headers, token: 'token-c' }));
  });

  it('accepts a signature over any of the candidate URLs', async () => {
    const headers = await signed(['token-a'], { url: 'http://127.0.0.1:3000/api/workflow' });
    await expect(verify({ headers, urls: [URL_A, 'http://127.0.0.1:3000/api/workflow'] })).resolves.toBeDefined();
  });

  it('ignores signatures of another scheme version', async () => {
    const headers = await signed(['token-a']);
    headers.set(Header.Signature, headers.get(Header.Signature)!.replace('v1,', 'v2,'));
    await signatureError(verify({ headers }));
  });

  it('rejects a wrong token', async () => {
    const error = await signatureError(verify({ headers: await signed(['token-b']) }));
    expect(error.message).toMatch(/Invalid signature.*WF_TOKEN/);
  });

  it('rejects a tampered body', async () => {
    await signatureError(verify({ headers: await signed(['token-a']), body: BODY.replace('ü', 'u') }));
    await signatureError(verify({ headers: await signed(['token-a']), body: BODY + ' ' }));
  });

  it('rejects a tampered URL', async () => {
    await signatureError(
      verify({ headers: await signed(['token-a']), urls: ['https://app.example.com/api/workflow2'] }),
    );
    await signatureError(verify({ headers: await signed(['token-a'], { url: 'https://evil.example/api/workflow' }) }));
  });

  it('rejects a tampered id or timestamp', async () => {
    const headers = await signed(['token-a']);
    headers.set(Header.SignatureId, 'msg_2');
    await signatureError(verify({ headers }));
    const later = await signed(['token-a']);
    later.set(Header.SignatureTimestamp, String(NOW + 1));
    await signatureError(verify({ headers: later }));
  });

  it.each([
    ['just inside the window (past)', -SIGNATURE_TOLERANCE_SECONDS, true],
    ['just inside the window (future)', SIGNATURE_TOLERANCE_SECONDS, true],
    ['too old', -SIGNATURE_TOLERANCE_SECONDS - 1, false],
    ['too far in the future', SIGNATURE_TOLERANCE_SECONDS + 1, false],
  ])('timestamp %s', async (_label, offset, ok) => {
    const headers = await signed(['token-a'], { timestamp: NOW + offset });
    if (ok) await expect(verify({ headers })).resolves.toBeDefined();
    else expect((await signatureError(verify({ headers }))).message).toMatch(/outside the ±300s window/);
  });

  it('rejects a timestamp that is not an integer', async () => {
    const headers = await signed(['token-a']);
    headers.set(Header.SignatureTimestamp, 'soon');
    await signatureError(verify({ headers }));
  });

  it('returns the signed deadline, and refuses the request once it has passed', async () => {
    const headers = await signed(['token-a'], { deadline: NOW * 1000 + 5_000 });
    await expect(verify({ headers })).resolves.toEqual({ deadline: NOW * 1000 + 5_000 });
    await expect(verify({ headers, nowMs: NOW * 1000 + 5_000 })).resolves.toEqual({ deadline: NOW * 1000 + 5_000 });
    expect((await signatureError(verify({ headers, nowMs: NOW * 1000 + 5_001 }), 'LATE')).message).toMatch(
      /^Late request: its deadline passed 1 ms ago/,
    );
  });

  it('rejects a tampered or malformed deadline', async () => {
    const headers = await signed(['token-a']);
    headers.set(Header.Deadline, String(NOW * 1000 + 3_600_000));
    expect((await signatureError(verify({ headers }))).message).toMatch(/^Invalid signature/);
    headers.set(Header.Deadline, 'later');
    expect((await signatureError(verify({ headers }))).message).toMatch(/epoch milliseconds/);
  });

  it.each([Header.SignatureId, Header.SignatureTimestamp, Header.Deadline, Header.Signature])(
    'rejects a request without %s',
    async (name) => {
      const headers = await signed(['token-a']);
      headers.delete(name);
      expect((await signatureError(verify({ headers }))).message).toMatch(/^Unsigned request/);
    },
  );
});

describe('checkSignatureClaim: what is refused before the body is read', () => {
  const claim = (headers: Headers): unknown => checkSignatureClaim(headers, { now: NOW });
  const refusal = (headers: Headers, code = 'SIGNATURE'): string => {
    try {
      claim(headers);
    } catch (error) {
      expect(WorkflowError.is(error) && error.code).toBe(code);
      return (error as Error).message;
    }
    throw new Error('Expected the claim to be refused, it passed.');
  };
  const valid = 'v1,' + 'A'.repeat(43) + '=';

  it('accepts a well-formed claim without the body, and returns its parts', async () => {
    const headers = await signed(['token-a', 'token-b']);
    expect(claim(headers)).toEqual({
      id: 'msg_1',
      timestamp: String(NOW),
      deadlineText: String(NOW * 1000 + 60_000),
      deadline: NOW * 1000 + 60_000,
      signatures: headers.get(Header.Signature)!.split(' '),
    });
    headers.set(Header.SignatureId, crypto.randomUUID());
    expect(claim(headers)).toBeDefined();
  });

  it.each([
    ['an id with a space', 'a b', /Expected wf-signature-id to be 1 to 128/],
    ['an id with the separator', 'a.b', /Expected wf-signature-id/],
    ['an id too long', 'x'.repeat(129), /Expected wf-signature-id/],
  ])('refuses %s', async (_label, id, message) => {
    const headers = await signed(['token-a']);
    headers.set(Header.SignatureId, id);
    expect(refusal(headers)).toMatch(message);
  });

  it.each([['1e9'], ['+1750000000'], [' 1750000000x'], ['1750000000.0'], ['9'.repeat(40)]])(
    'refuses the timestamp %j',
    async (timestamp) => {
      const headers = await signed(['token-a']);
      headers.set(Header.SignatureTimestamp, timestamp);
      expect(refusal(headers)).toMatch(/outside the ±300s window/);
    },
  );

  it.each([['soon'], ['-1'], ['1e15'], ['9'.repeat(17)]])('refuses the deadline %j', async (deadline) => {
    const headers = await signed(['token-a']);
    headers.set(Header.Deadline, deadline);
    expect(refusal(headers)).toMatch(/epoch milliseconds/);
  });

  it('refuses a deadline already past, before any HMAC', async () => {
    expect(refusal(await signed(['token-a'], { deadline: NOW * 1000 - 1 }), 'LATE')).toMatch(
      /^Late request: its deadline passed 1 ms ago/,
    );
  });

  it.each([
    ['not v1', 'v2,' + 'A'.repeat(43) + '='],
    ['too short', 'v1,AAAA'],
    ['not base64', 'v1,' + '*'.repeat(43) + '='],
    ['too many', Array.from({ length: MAX_SIGNATURES + 1 }, () => valid).join(' ')],
    ['two spaces', `${valid}  ${valid}`],
    ['huge', 'v1,' + 'A'.repeat(100_000)],
  ])('refuses a signature header that is %s', async (_label, value) => {
    const headers = await signed(['token-a']);
    headers.set(Header.Signature, value);
    expect(refusal(headers)).toMatch(
      /Expected wf-signature to be 1 to 8 space-separated "v1,<base64 of 32 bytes>" values/,
    );
  });

  it('names the headers it got when some are missing', () => {
    expect(refusal(new Headers({ [Header.Signature]: valid }))).toBe(
      'Unsigned request: expected the wf-signature-id, wf-signature-timestamp, wf-deadline, wf-signature headers, got wf-signature.',
    );
  });
});

describe('hasSignature', () => {
  it('tells drive requests (and requests claiming to be one) from starts', async () => {
    expect(hasSignature(await signed(['token-a']))).toBe(true);
    for (const name of [Header.SignatureId, Header.SignatureTimestamp, Header.Deadline, Header.Signature])
      expect(hasSignature(new Headers({ [name]: 'x' }))).toBe(true);
    expect(hasSignature(new Headers({ 'content-type': 'application/json' }))).toBe(false);
  });
});
