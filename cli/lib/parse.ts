import { InvalidArgumentError } from 'commander';

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError(`Expected a port from 0 to 65535, got "${value}".`);
  return port;
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
