/**
 * Header names as QStash reports them in a callback's `header` and `sourceHeader`: in the canonical
 * form of Go's `net/http` (QStash is a Go service), `Content-Type`, `Get-Header`, `X-Request-Id`:
 * the first letter and each one after a hyphen upper case, the rest lower case. So an app indexes
 * `response.header["Content-Type"]` whatever case the target wrote (an HTTP/2 or a fetch-based
 * server sends lower case; Upstash's own CI app reads `header["Get-Header"]` from such a target).
 * A name holding a character outside an HTTP token stays as it is, as Go leaves it.
 */

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function canonicalHeaderName(name: string): string {
  if (!TOKEN.test(name)) return name;
  const upper = (_match: string, dash: string, letter: string): string => dash + letter.toUpperCase();
  return name.toLowerCase().replace(/(^|-)([a-z])/g, upper);
}
