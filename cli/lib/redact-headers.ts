import { InvalidArgumentError, Option } from 'commander';
import { CliError } from '../errors.js';

/**
 * Header names the runner redacts besides the built-in credential headers (`CREDENTIAL_HEADERS`):
 * `--redact-header <name>` (repeatable) on `wf start` and `wf dev`, plus `WF_REDACT_HEADERS`
 * (comma separated). Names are compared without case.
 */

/** An HTTP header name: RFC 9110's `token` characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function collectName(value: string, previous: string[]): string[] {
  if (!HEADER_NAME.test(value)) throw new InvalidArgumentError(`Expected an HTTP header name, got "${value}".`);
  return [...previous, value.toLowerCase()];
}

/** The repeatable `--redact-header <name>` option, the same on `wf start` and `wf dev`. */
export const redactHeaderOption = (): Option =>
  new Option(
    '--redact-header <name>',
    'redact this header too, wherever it is stored or shown (repeatable; also WF_REDACT_HEADERS=a,b)',
  )
    .argParser(collectName)
    .default([]);

/**
 * The flags' names plus `WF_REDACT_HEADERS`'.
 * @example redactHeaderNames(['x-tenant'], { WF_REDACT_HEADERS: 'X-Session, x-sig' }) // ['x-tenant', 'x-session', 'x-sig']
 */
export function redactHeaderNames(flags: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.WF_REDACT_HEADERS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const bad = fromEnv.find((name) => !HEADER_NAME.test(name));
  if (bad !== undefined)
    throw new CliError(
      2,
      'BAD_ENV',
      `Expected WF_REDACT_HEADERS to be header names separated by commas, got "${bad}" in "${env.WF_REDACT_HEADERS}".`,
    );
  return [...new Set([...(flags ?? []), ...fromEnv.map((name) => name.toLowerCase())])];
}
