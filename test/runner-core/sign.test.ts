import { describe, expect, it } from 'vitest';
import { Header } from '../../protocol/headers.js';
import { signRequest, verifyRequest } from '../../protocol/signing.js';
import { signDrive } from '../../runner-core/drive/sign.js';

describe('runner signing (node:crypto) against the route verifier (Web Crypto)', () => {
  const url = 'http://127.0.0.1:3000/workflow';
  const body = '{"v":1,"runId":"wfr_x","body":"{}","headers":{},"steps":[],"attempt":1}';

  it('is accepted by verifyRequest for each token it signs with', async () => {
    const headers = new Headers(signDrive(url, body, ['current-token', 'next-token'], Date.now() + 30_000));
    for (const token of ['current-token', 'next-token'])
      await expect(verifyRequest({ headers, body, urls: [url], token })).resolves.toBeDefined();
    await expect(verifyRequest({ headers, body, urls: [url], token: 'other' })).rejects.toMatchObject({
      code: 'SIGNATURE',
    });
    await expect(
      verifyRequest({ headers, body: body + ' ', urls: [url], token: 'current-token' }),
    ).rejects.toMatchObject({ code: 'SIGNATURE' });
  });

  it('produces the very signature the Web Crypto signer does for the same id and time', async () => {
    const fast = signDrive(url, body, ['t1', 't2'], 1_700_000_012_345, 1_700_000_000);
    const web = await signRequest({
      url,
      body,
      tokens: ['t1', 't2'],
      id: fast[Header.SignatureId],
      timestamp: 1_700_000_000,
      deadline: 1_700_000_012_345,
    });
    expect(fast).toEqual(web);
  });
});
