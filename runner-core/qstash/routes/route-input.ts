import type { Context } from 'hono';
import { QStashHeaderError } from '../durations.js';
import { badRequest } from '../errors.js';
import { parseMessage, type MessageSpec } from '../messages/spec.js';

/** What the `/v2` routes read from a request: its headers, a destination in its path, the message they make. */

/** Reads the `QStashHeaderError`s of parsing into the API's 400. */
export function parsed(destination: string, headers: Record<string, string>, body: string, where: string): MessageSpec {
  try {
    return parseMessage(destination, headers, body);
  } catch (error) {
    if (error instanceof QStashHeaderError)
      throw badRequest(
        error.message.startsWith('The runner does not support') ? 'UNSUPPORTED' : 'BAD_HEADER',
        `${where}: ${error.message}`,
      );
    throw error;
  }
}

export function requestHeaders(c: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of c.req.raw.headers) out[name] = value;
  return out;
}

export function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(
      'BAD_REQUEST',
      `Expected a %-encoded destination URL, got a malformed escape in "${text.slice(0, 200)}".`,
    );
  }
}

/**
 * The destination a path names after `/v2/<route>/`, as the client wrote it (`/v2/publish/https://app/x?y=1`):
 * an http(s) URL; topics, URL groups and API destinations are refused (400 `UNSUPPORTED`).
 */
export function pathDestination(c: Context, route: 'publish' | 'trigger'): string {
  const url = new URL(c.req.url);
  const destination = decodeURIComponentSafe(url.pathname.slice(`/v2/${route}/`.length)) + url.search;
  if (/^(queue|topic|url-group)s?\//i.test(destination) || !/^https?:\/\//i.test(destination)) {
    throw badRequest(
      'UNSUPPORTED',
      `Expected /v2/${route}/<http(s) URL>, got /v2/${route}/${destination}: topics, URL groups and API destinations are not supported by this runner.`,
    );
  }
  return destination;
}
