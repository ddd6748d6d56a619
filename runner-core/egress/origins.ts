/**
 * Where the runner may send drive requests. A start names its route's URL, and anyone holding a
 * token can start runs: without this list, a token would let its holder make the runner POST
 * signed requests anywhere its network reaches. Patterns are parsed once, matching is pure.
 */

/** One allowed origin: `https://app.example.com`, `https://*.example.com`, `http://127.0.0.1:*`. */
export interface OriginPattern {
  /** As the operator wrote it, for messages. */
  text: string;
  scheme: 'http' | 'https';
  /** Lowercase host; for a wildcard, the suffix after `*.` (`example.com`). IPv6 in brackets. */
  host: string;
  /** `*.` before the host: any subdomain (one label or more), not the host itself. */
  subdomains: boolean;
  /** A port, `*` for any, or null for the scheme's default (80, 443). */
  port: number | '*' | null;
}

/** What `wf dev` and a `Runner` built without `allowedOrigins` may call: this machine, any port. */
export const LOOPBACK_ORIGINS: readonly string[] = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'];

const PATTERN = /^(https?):\/\/(\*\.)?(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(\*|\d{1,5}))?\/?$/i;

/**
 * Parses one origin pattern; throws a message naming the pattern and the expected shape.
 * @example parseOriginPattern('https://*.example.com') // { scheme: 'https', host: 'example.com', subdomains: true, port: null, … }
 */
export function parseOriginPattern(text: string): OriginPattern {
  const trimmed = text.trim();
  const match = PATTERN.exec(trimmed);
  const port = match?.[4] === undefined ? null : match[4] === '*' ? '*' : Number(match[4]);
  if (!match || (typeof port === 'number' && (port < 1 || port > 65_535))) {
    throw new Error(
      `Expected an allowed origin like https://app.example.com, https://*.example.com or http://127.0.0.1:* (scheme, host, optional port or :*, no path), got "${text}".`,
    );
  }
  return {
    text: trimmed,
    scheme: match[1]!.toLowerCase() as 'http' | 'https',
    host: match[3]!.toLowerCase(),
    subdomains: match[2] !== undefined,
    port,
  };
}

/** Parses a list of patterns (flags, env), each checked. */
export function parseOriginPatterns(texts: readonly string[]): OriginPattern[] {
  return texts.map(parseOriginPattern);
}

/** `WF_ALLOWED_ORIGINS`: patterns separated by commas or spaces. */
export function splitOriginList(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter((part) => part.length > 0);
}

/**
 * Whether one of `patterns` allows the origin of `url` (false for anything that is not an http(s)
 * URL). A pattern without a port means the scheme's default (`https://a.com` is `https://a.com:443`).
 * @example originAllowed('http://127.0.0.1:3000/api/wf', parseOriginPatterns(['http://127.0.0.1:*'])) // true
 */
export function originAllowed(url: string | URL, patterns: readonly OriginPattern[]): boolean {
  let target: URL;
  try {
    // A parsed URL is taken as it is: the egress gate checks every request it sends, parsed once.
    target = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  const scheme = target.protocol.slice(0, -1);
  const host = target.hostname.toLowerCase();
  const port = target.port === '' ? null : Number(target.port);
  return patterns.some(
    (p) =>
      p.scheme === scheme &&
      (p.subdomains ? host.endsWith(`.${p.host}`) : host === p.host) &&
      (p.port === '*' ||
        p.port === port ||
        (p.port !== null && port === null && p.port === (scheme === 'https' ? 443 : 80))),
  );
}
