import { InvalidArgumentError } from 'commander';
import { RUN_STATUSES, type RunStatus } from '../../api/dto.js';
import { parseTimeText } from '../../api/run-query.js';
import { toMilliseconds } from '../../protocol/duration.js';
import { CliError } from '../errors.js';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidArgumentError(`Expected a port from 0 to 65535, got "${value}".`);
  return port;
}

/** A URL flag: http(s) only, checked as it is read. */
export function parseFlagUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new InvalidArgumentError(`Expected an http(s) URL, got "${value}".`);
  return value;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`Expected a positive integer, got "${value}".`);
  return n;
}

/** Validates JSON given on the command line, keeping the text as typed. */
export function parseJsonText(value: string): string {
  try {
    JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`Expected JSON, got ${JSON.stringify(value)}: ${(error as Error).message}`);
  }
  return value;
}

/** `Name: value` headers, collected across repeated flags. */
export function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError(`Expected a header as "Name: value", got "${value}".`);
  return { ...previous, [value.slice(0, colon).trim().toLowerCase()]: value.slice(colon + 1).trim() };
}

export function parseNonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`Expected a non-negative integer, got "${value}".`);
  return n;
}

/**
 * A time flag (`--since 2h`, `--until 2026-01-31T12:00:00Z`) as epoch ms: a duration ago, or a
 * date (ISO 8601, or epoch milliseconds) as the API reads it.
 */
export function parseTimeFlag(text: string, flag: string, now: number): number {
  if (/^\d+(\.\d+)?\s*(ms|s|m|h|d|w)$/.test(text.trim())) return now - toMilliseconds(text.trim(), flag);
  const at = parseTimeText(text);
  if (at === undefined) {
    throw new CliError(
      2,
      'BAD_ARGUMENT',
      `Expected ${flag} to be a duration ago like "2h" or "7d", or a date like 2026-01-31T12:00:00Z, got "${text}".`,
    );
  }
  return at;
}

/** `--status failed,cancelled` (repeatable), each checked against the run statuses. */
export function collectStatuses(value: string, previous: RunStatus[] = []): RunStatus[] {
  const next = [...previous];
  for (const part of value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    if (!(RUN_STATUSES as readonly string[]).includes(part)) {
      throw new InvalidArgumentError(
        `Expected a status among ${RUN_STATUSES.join(', ')} (comma-separated), got "${part}".`,
      );
    }
    if (!next.includes(part as RunStatus)) next.push(part as RunStatus);
  }
  return next;
}
