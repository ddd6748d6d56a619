import { createHash } from 'node:crypto';

/**
 * The shape of a `QSTASH_TOKEN`. `@upstash/workflow` reads its token as QStash issues them, base64
 * of `{"UserID": …, "Password": …}`: `context.createWebhook` decodes it for the user id it puts in
 * the webhook URL, and fails the step when the token is not that JSON. So the runner takes a token in
 * both forms, everywhere a token is checked (`TokenSet.check`): one of its tokens as it is (what
 * `WF_TOKEN` holds), or wrapped, with the runner token as `Password`. The user id is not a
 * credential (it is in every webhook URL); the wrapped form `qstashToken` makes derives it from the
 * token, so it stays the same across restarts.
 */

/** Longest bearer value unwrapped: a runner token wrapped is a few hundred bytes at most. */
const MAX_WRAPPED_LENGTH = 4_096;

/** The user id of `token`'s wrapped form: stable, not reversible to the token. */
export function qstashUserId(token: string): string {
  return 'wf' + createHash('sha256').update(`wfkit qstash user id\0${token}`).digest('hex').slice(0, 24);
}

/**
 * `token` as a `QSTASH_TOKEN` the SDK can decode (what `wf dev` gives Upstash apps).
 * @example qstashToken('wf_abc') // 'eyJVc2VySUQiOiJ3Zj…' = base64 of {"UserID":"wf…","Password":"wf_abc"}
 */
export function qstashToken(token: string): string {
  return Buffer.from(JSON.stringify({ UserID: qstashUserId(token), Password: token }), 'utf8').toString('base64');
}

/** The runner token inside a wrapped `QSTASH_TOKEN`; undefined when `bearer` is not one. */
export function unwrapQstashToken(bearer: string): string | undefined {
  if (bearer.length > MAX_WRAPPED_LENGTH || !/^[A-Za-z0-9+/=_-]+$/.test(bearer)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(bearer, 'base64').toString('utf8'));
    if (typeof value !== 'object' || value === null) return undefined;
    const { Password: password } = value as { Password?: unknown };
    return typeof password === 'string' && password !== '' ? password : undefined;
  } catch {
    return undefined;
  }
}
