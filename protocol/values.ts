import { WorkflowError } from './errors.js';

/**
 * Step values travel and are stored as text. `undefined` is the absence of text.
 * One place decides the encoding so both sides always agree.
 */
export function encodeValue(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
    return text;
  } catch (error) {
    const type = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
    throw new WorkflowError('SERIALIZATION', `Cannot serialize the value returned by ${where} (a ${type}): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export function decodeValue(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text);
}
