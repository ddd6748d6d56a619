import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The alert's signature, in the shape Stripe made familiar: `wf-alert-signature: t=<unix seconds>,v1=<hex>`,
 * where v1 is HMAC-SHA256(secret, `<t>.<body>`). Signing the timestamp with the body lets a receiver
 * refuse an old alert replayed at it. README ("Failure alerts") shows the same check for receivers.
 */
export const ALERT_SIGNATURE_HEADER = 'wf-alert-signature';
/** The alert document's `id`, also as a header, so a receiver can drop a repeat without parsing. */
export const ALERT_ID_HEADER = 'wf-alert-id';

export function alertSignature(body: string, secret: string, timestamp: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/**
 * A receiver's check: the header is well formed, signed with `secret` over this exact body, and at
 * most `toleranceS` old. Exported for receivers written with wfkit-cli at hand, and for the tests.
 * @example verifyAlertSignature(rawBody, req.headers['wf-alert-signature'], process.env.WF_ALERT_SECRET!)
 */
export function verifyAlertSignature(
  body: string,
  header: string | undefined,
  secret: string,
  nowS = Math.floor(Date.now() / 1000),
  toleranceS = 300,
): boolean {
  const fields = new Map(
    (header ?? '').split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]),
  );
  const t = Number(fields.get('t'));
  const v1 = fields.get('v1') ?? '';
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(v1) || Math.abs(nowS - t) > toleranceS) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
