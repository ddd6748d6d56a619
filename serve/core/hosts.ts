import { WorkflowError } from '../../protocol/errors.js';

/**
 * Which hosts the route may take its public URL from when nothing configures the URL itself. A
 * `Host` (or `X-Forwarded-Host`) header is the client's to choose, and the runner sends signed
 * drive requests, with the payload, to the URL a start names: so the request's host is used only
 * when it is listed here, or in development when it is a loopback address.
 */

/** One entry of `allowedHosts` / `WF_ALLOWED_HOSTS`: `app.example.com`, `app.example.com:8443`, `*.example.com`, `[::1]:3000`. */
const PATTERN = /^(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

export interface HostPattern {
  /** `*.example.com`: any subdomain of the name (not the name itself). */
  wildcard: boolean;
  hostname: string;
  /** Without a port, only the scheme's default port matches (a client must not pick another one). */
  port: string;
}

/** Parses host patterns; `where` names the option or variable in the error. */
export function parseHostPatterns(values: readonly string[], where: string): HostPattern[] {
  return values.map((raw) => {
    const value = raw.trim().toLowerCase();
    const match = PATTERN.exec(value);
    if (!match || (match[3] !== undefined && Number(match[3]) > 65_535)) {
      throw new WorkflowError(
        'CONFIG',
        `Expected each entry of \`${where}\` to be a host like app.example.com, app.example.com:8443 or *.example.com (no scheme, no path), got ${JSON.stringify(raw)}.`,
      );
    }
    return { wildcard: match[1] !== undefined, hostname: match[2]!, port: match[3] ?? '' };
  });
}

/** `WF_ALLOWED_HOSTS`: comma-separated patterns; empty entries are ignored. */
export function parseHostList(value: string | undefined): HostPattern[] {
  const entries = (value ?? '').split(',').filter((entry) => entry.trim() !== '');
  return parseHostPatterns(entries, 'WF_ALLOWED_HOSTS');
}

/** `url.host` of a parsed URL (lower-case, default port dropped) against the patterns. */
export function hostMatches(url: URL, patterns: readonly HostPattern[]): boolean {
  return patterns.some(
    (p) => p.port === url.port && (p.wildcard ? url.hostname.endsWith(`.${p.hostname}`) : url.hostname === p.hostname),
  );
}

/** localhost, 127.0.0.0/8 and [::1]: where `wf dev` and a local runner reach the app. */
export function isLoopbackHost(url: URL): boolean {
  const name = url.hostname;
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
