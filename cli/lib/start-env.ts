import { CliError } from '../errors.js';
import type { NamedToken } from './token-strength.js';

/**
 * The tokens `wf start` accepts: `WF_TOKENS` (several, comma or whitespace separated: the current
 * one first, then the ones being rotated out), plus `WF_TOKEN` (or `SERVICE_TOKEN`). Drive requests
 * are signed with each, so apps on either side of a rotation verify them.
 *
 * @example
 * tokensFromEnv({ WF_TOKENS: 'wf_new, wf_old' }); // ['wf_new', 'wf_old']
 */
export function tokensFromEnv(env: NodeJS.ProcessEnv): string[] {
  return namedTokensFromEnv(env).map(({ token }) => token);
}

/** {@link tokensFromEnv}, each with where it was set (`WF_TOKENS entry 2`, `WF_TOKEN`), for messages. */
export function namedTokensFromEnv(env: NodeJS.ProcessEnv): NamedToken[] {
  const named: NamedToken[] = (env.WF_TOKENS ?? '')
    .split(/[\s,]+/)
    .filter((token) => token !== '')
    .map((token, i) => ({ token, name: `WF_TOKENS entry ${i + 1}` }));
  const single = env.WF_TOKEN
    ? { token: env.WF_TOKEN, name: 'WF_TOKEN' }
    : env.SERVICE_TOKEN
      ? { token: env.SERVICE_TOKEN, name: 'SERVICE_TOKEN' }
      : undefined;
  if (single) named.push(single);
  return named.filter((entry, i) => named.findIndex((other) => other.token === entry.token) === i);
}

/** `WF_LEASE_MS`, when set: a positive integer of milliseconds. */
export function leaseMsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.WF_LEASE_MS;
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 1)
    throw new CliError(2, 'BAD_ENV', `Expected WF_LEASE_MS to be a positive integer of milliseconds, got "${text}".`);
  return ms;
}
