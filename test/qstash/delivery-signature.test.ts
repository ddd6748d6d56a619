import { afterEach, describe, expect, it, vi } from 'vitest';
import { Receiver } from '@upstash/qstash';
import { DELIVERY_SIGNATURE_LIFETIME_SECONDS, signDelivery } from '../../runner-core/qstash/signature.js';

/**
 * The `Upstash-Signature` of a delivery, checked by the real SDK's `Receiver` (the one
 * `@upstash/workflow` calls, with no clock tolerance): accepted when it arrives, refused once its
 * short lifetime is over, so a JWT copied from anywhere cannot be replayed at the app for long.
 */

const keys = { currentSigningKey: 'sig_current_0123456789', nextSigningKey: 'sig_next_0123456789' };
const url = 'http://127.0.0.1:3000/api/workflow';
const body = '[{"messageId":"msg_1","body":"e30=","callType":"step"}]';
const claims = (jwt: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

afterEach(() => {
  vi.useRealTimers();
});

describe('delivery signatures', () => {
  it('are valid from the moment they are sent for at most a minute, shorter than QStash’s 5', () => {
    const sentAt = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    const jwt = claims(signDelivery(keys.currentSigningKey, url, body, sentAt));
    expect(jwt).toMatchObject({ iss: 'Upstash', sub: url, nbf: sentAt / 1000 - 0.5, iat: sentAt / 1000 - 0.5 });
    expect(Number(jwt.exp) - Number(jwt.nbf)).toBe(DELIVERY_SIGNATURE_LIFETIME_SECONDS);
    expect(DELIVERY_SIGNATURE_LIFETIME_SECONDS).toBeLessThanOrEqual(60);
  });

  it('pass the real Receiver when they arrive and fail it once they expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sentAt = Date.UTC(2026, 0, 1, 12, 0, 0);
    vi.setSystemTime(sentAt);
    const signature = signDelivery(keys.currentSigningKey, url, body, sentAt);
    const receiver = new Receiver(keys);
    await expect(receiver.verify({ signature, body })).resolves.toBe(true);
    vi.setSystemTime(sentAt + (DELIVERY_SIGNATURE_LIFETIME_SECONDS - 1) * 1000);
    await expect(receiver.verify({ signature, body, url })).resolves.toBe(true);
    vi.setSystemTime(sentAt + DELIVERY_SIGNATURE_LIFETIME_SECONDS * 1000);
    await expect(receiver.verify({ signature, body })).rejects.toThrow();
    // With the next key the same, the error the Receiver reports is the current key's: expired.
    const sameKeys = new Receiver({
      currentSigningKey: keys.currentSigningKey,
      nextSigningKey: keys.currentSigningKey,
    });
    await expect(sameKeys.verify({ signature, body })).rejects.toThrow(/"exp" claim/);
  });

  it('fail the Receiver for another body', async () => {
    const signature = signDelivery(keys.currentSigningKey, url, body);
    await expect(new Receiver(keys).verify({ signature, body: '[]' })).rejects.toThrow(/body hash/);
  });
});
