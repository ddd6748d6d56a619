import { CliError } from '../errors.js';

/** A run id no runner has: asking for its steps tells whether the token is accepted, and changes nothing. */
const NO_SUCH_RUN = 'wfr_00000000000000000000000000';

/**
 * Checks a runner `wf dev --remote` will use: it answers `/healthz`, and it accepts `token` (its
 * steps endpoint always needs the token: 401 for a wrong one, 404 for this unknown run).
 */
export async function checkRemoteRunner(url: string, token: string, timeoutMs = 10_000): Promise<void> {
  const base = url.replace(/\/+$/, '');
  try {
    await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const reason = ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
    throw new CliError(
      1,
      'UNREACHABLE',
      `Cannot reach the runner at ${base}: ${reason} (is \`wf start\` running there? check --remote).`,
      { cause: error },
    );
  }
  const response = await fetch(`${base}/v1/runs/${NO_SUCH_RUN}/steps`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.body?.cancel();
  if (response.status === 401) {
    throw new CliError(
      1,
      'UNAUTHORIZED',
      `The runner at ${base} refused the token: pass its token with --token or WF_TOKEN (the app gets the same one).`,
    );
  }
}
