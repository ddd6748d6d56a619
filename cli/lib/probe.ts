import { connect } from 'node:net';
import { Header } from '../../protocol/headers.js';
import { signRequest } from '../../protocol/signing.js';

/** The body of a probe; signed like a drive body. */
export const PROBE_BODY = JSON.stringify({ probe: true });

export type ProbeResult =
  | { kind: 'ok'; url: string; framework: string | null }
  | { kind: 'refused' }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'status'; status: number; said: string; code?: string };

/** A single line for the user, and how bad it is. */
export interface Finding {
  level: 'info' | 'warn' | 'error';
  text: string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
export const isLoopbackUrl = (url: URL): boolean => LOOPBACK.has(url.hostname) || url.hostname.endsWith('.localhost');

/** Resolves true once something accepts TCP connections on `port` (IPv4 or IPv6 loopback). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

export interface WaitForPortOptions {
  /** @default 60000 */
  timeoutMs?: number;
  /** Called about every `progressMs` while waiting, with the seconds waited so far. @default 5000 */
  onProgress?: (seconds: number) => void;
  progressMs?: number;
  /** Stops waiting (the app exited, `wf dev` is stopping). */
  signal?: AbortSignal;
}

/** Polls until the app's port answers; the loopback host that answered, or undefined (timed out or aborted). */
export async function waitForPort(
  port: number,
  options: WaitForPortOptions = {},
): Promise<'127.0.0.1' | '::1' | undefined> {
  const { timeoutMs = 60_000, progressMs = 5000, onProgress, signal } = options;
  const started = Date.now();
  let reported = started;
  while (!signal?.aborted) {
    const [v4, v6] = await Promise.all([accepts('127.0.0.1', port), accepts('::1', port)]);
    if (v4) return '127.0.0.1';
    if (v6) return '::1';
    const now = Date.now();
    if (now - started >= timeoutMs) return undefined;
    if (now - reported >= progressMs) {
      reported = now;
      onProgress?.(Math.round((now - started) / 1000));
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return undefined;
}

/**
 * Sends the signed probe: `wf-probe: 1`, the body `{"probe":true}`, signed with `token` over each
 * of `signUrls` (one signature per URL in the one header; the route accepts any that matches its
 * own URL or the URL it was reached at), so a 401 means the token, not how the URL was spelled.
 */
export async function probeApp(
  target: string,
  signUrls: readonly string[],
  token: string,
  timeoutMs = 10_000,
): Promise<ProbeResult> {
  const id = crypto.randomUUID();
  const timestamp = Math.floor(Date.now() / 1000);
  const signed = await Promise.all(
    [...new Set([target, ...signUrls])].map((url) =>
      signRequest({ url, body: PROBE_BODY, tokens: [token], id, timestamp }),
    ),
  );
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [Header.Probe]: '1',
    ...signed[0],
    [Header.Signature]: signed.map((s) => s[Header.Signature]).join(' '),
    // localtunnel.me shows browsers a reminder page first; this header skips it.
    'bypass-tunnel-reminder': '1',
  };
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'POST',
      headers,
      body: PROBE_BODY,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as Error).cause as { code?: string; message?: string } | undefined;
    if (cause?.code === 'ECONNREFUSED') return { kind: 'refused' };
    return {
      kind: 'unreachable',
      reason:
        (error as Error).name === 'TimeoutError'
          ? `no answer within ${timeoutMs / 1000} s`
          : (cause?.message ?? (error as Error).message),
    };
  }
  const text = await response.text();
  let body: {
    ok?: boolean;
    url?: string;
    framework?: string | null;
    error?: { code?: string; message?: string };
    message?: string;
  } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {}
  if (response.status === 200 && body.ok === true && typeof body.url === 'string')
    return { kind: 'ok', url: body.url, framework: body.framework ?? null };
  const said = body.error?.message ?? body.message ?? (text.replace(/\s+/g, ' ').trim().slice(0, 160) || '(no body)');
  return { kind: 'status', status: response.status, said, code: body.error?.code };
}

/** What a probe of the app itself (on its port) means, in one line. */
export function explainProbe(result: ProbeResult, where: { port: number; route: string }): Finding {
  const { port, route } = where;
  switch (result.kind) {
    case 'ok':
      return { level: 'info', text: `app ok: ${result.url}${result.framework ? ` (${result.framework})` : ''}` };
    case 'refused':
      return {
        level: 'error',
        text: `nothing listens on port ${port} (is the app's dev server on another port? --app-port)`,
      };
    case 'unreachable':
      return { level: 'error', text: `the app on port ${port} did not answer the probe: ${result.reason}` };
    case 'status':
      if (result.status === 404 || result.status === 405)
        return {
          level: 'error',
          text: `no workflow route at ${route} on port ${port} (the app answered ${result.status}; --route sets the path)`,
        };
      if (result.status === 401)
        return { level: 'error', text: `the app's WF_TOKEN differs from the runner's (the app said: ${result.said})` };
      if (result.status === 400 && result.code === 'PROTOCOL')
        return {
          level: 'warn',
          text: `the route at ${route} does not know probes (is the app's wfkit older than this CLI?): ${result.said}`,
        };
      return { level: 'error', text: `the app answered ${result.status} to the probe at ${route}: ${result.said}` };
  }
}

/** What a probe through the tunnel means: the app itself was fine, so anything else is the tunnel's. */
export function explainTunnelProbe(result: ProbeResult, publicUrl: string): Finding {
  if (result.kind === 'ok') return { level: 'info', text: `the app answers through the tunnel at ${publicUrl}` };
  const why =
    result.kind === 'status'
      ? `${result.status}: ${result.said}`
      : result.kind === 'refused'
        ? 'connection refused'
        : result.reason;
  return { level: 'error', text: `the app does not answer through the tunnel at ${publicUrl} (${why})` };
}

export interface Expected {
  port: number;
  route: string;
  /** The tunnel's public origin, when there is one: the runner must call it. */
  tunnelUrl?: string;
  /** The runner is on another machine (`--remote`). */
  remote: boolean;
}

/** A warning when the URL the app will hand the runner is not one the runner can use to reach it. */
export function urlWarning(appUrl: string, expected: Expected): string | undefined {
  const { port, route, tunnelUrl, remote } = expected;
  if (tunnelUrl) {
    const want = tunnelUrl.replace(/\/+$/, '') + route;
    if (appUrl === want) return undefined;
    return `the app will give the runner ${appUrl}, not the tunnel's ${want}: it does not use WF_WORKFLOW_URL (a fixed \`url\` or \`baseUrl\` option?)`;
  }
  const url = new URL(appUrl);
  if (remote)
    return isLoopbackUrl(url)
      ? `the remote runner cannot call ${appUrl} (a loopback address of this machine): add --tunnel`
      : undefined;
  const urlPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (isLoopbackUrl(url) && (urlPort !== port || url.pathname !== route)) {
    return `the app will give the runner ${appUrl}, but it answers at http://localhost:${port}${route} (check the \`baseUrl\` port in the route, or --app-port / --route)`;
  }
  return undefined;
}
