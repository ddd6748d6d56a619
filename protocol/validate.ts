import { ProtocolError, type SerializedError } from './errors.js';

/** Small hand-written field checks: each names the field, what was expected and what came. */
export type Fields = Record<string, unknown>;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

export function expectObject(value: unknown, where: string): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtocolError(`Expected ${where} to be a JSON object, got ${describe(value)}.`);
  }
  return value as Fields;
}

export function expectString(o: Fields, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string')
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be a string, got ${describe(v)}.`);
  return v;
}

export function optionalString(o: Fields, key: string, where: string): string | undefined {
  return o[key] === undefined ? undefined : expectString(o, key, where);
}

export function expectInteger(o: Fields, key: string, where: string, min = 0): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be an integer >= ${min}, got ${describe(v)}.`);
  }
  return v;
}

export function optionalInteger(o: Fields, key: string, where: string, min = 0): number | undefined {
  return o[key] === undefined ? undefined : expectInteger(o, key, where, min);
}

export function expectNumber(o: Fields, key: string, where: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be a number, got ${describe(v)}.`);
  }
  return v;
}

export function expectBoolean(o: Fields, key: string, where: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean')
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be a boolean, got ${describe(v)}.`);
  return v;
}

export function expectStringRecord(o: Fields, key: string, where: string): Record<string, string> {
  const v = expectObject(o[key], `\`${key}\` in ${where}`);
  for (const [name, value] of Object.entries(v)) {
    if (typeof value !== 'string') {
      throw new ProtocolError(`Expected \`${key}.${name}\` in ${where} to be a string, got ${describe(value)}.`);
    }
  }
  return v as Record<string, string>;
}

export function expectUrl(o: Fields, key: string, where: string): string {
  const v = expectString(o, key, where);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be an absolute URL, got ${describe(v)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be an http(s) URL, got ${describe(v)}.`);
  }
  return v;
}

/**
 * How deeply JSON a peer sends may nest (objects and arrays). Deeper input is refused before it
 * is parsed: decoders and encoders that recurse (devalue, structured logging) would overflow the
 * stack on it, and no workflow payload needs more.
 */
export const MAX_JSON_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Throws a ProtocolError when `text` nests objects and arrays deeper than `maxDepth`. A single
 * scan of the text without recursion, so it cannot overflow the stack itself; it does not check
 * that the JSON is well formed (JSON.parse does that next).
 * @example assertJsonDepth('[[1]]', 'the request body', 1); // throws: nested 2 levels deep
 */
export function assertJsonDepth(text: string, where: string, maxDepth = MAX_JSON_DEPTH): void {
  if (text.length <= maxDepth) return; // too short to nest deeper than the limit
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) {
        throw new ProtocolError(
          `Expected ${where} to nest objects and arrays at most ${maxDepth} levels deep, got deeper nesting at character ${i}.`,
        );
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
}

/**
 * JSON.parse that throws a ProtocolError saying where the malformed JSON came from, and refuses
 * JSON nested deeper than `maxDepth` (see {@link MAX_JSON_DEPTH}).
 */
export function parseJson(text: string, where: string, maxDepth = MAX_JSON_DEPTH): unknown {
  assertJsonDepth(text, where, maxDepth);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ProtocolError(`Malformed JSON in ${where}: ${(error as Error).message}`, { cause: error });
  }
}

export function optionalNumber(o: Fields, key: string, where: string): number | undefined {
  return o[key] === undefined ? undefined : expectNumber(o, key, where);
}

export function expectSerializedError(value: unknown, where: string): SerializedError {
  const o = expectObject(value, where);
  const error: SerializedError = { name: expectString(o, 'name', where), message: expectString(o, 'message', where) };
  const stack = optionalString(o, 'stack', where);
  if (stack !== undefined) error.stack = stack;
  const code = optionalString(o, 'code', where);
  if (code !== undefined) error.code = code;
  return error;
}
