import { parse, stringify } from 'devalue';
import { ProtocolError, WorkflowError } from './errors.js';

/**
 * Step values travel and are stored as text, encoded with devalue so `Date`, `Map`, `Set`,
 * `BigInt`, `undefined`, `NaN` and repeated references come back as they went in (JSON would
 * turn a Date into a string and drop undefined). A top-level `undefined` is the absence of text.
 * One place decides the encoding so both sides always agree.
 */
export function encodeValue(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    return stringify(value);
  } catch (error) {
    // devalue recurses: a value nested deeper than the stack allows ends here as a RangeError.
    if (error instanceof RangeError) {
      throw new WorkflowError(
        'SERIALIZATION',
        `Cannot store the value returned by ${where}: it is nested too deeply to serialize (${error.message}). Return data nested at most a few hundred levels.`,
        { cause: error },
      );
    }
    const path = (error as { path?: string }).path;
    const type = typeOf(value, path);
    throw new WorkflowError(
      'SERIALIZATION',
      `Cannot store the value returned by ${where}: ${type}${path ? ` at \`${path}\`` : ''} cannot be serialized (${(error as Error).message}). Return plain data: objects, arrays, strings, numbers, Date, Map, Set, BigInt.`,
      { cause: error },
    );
  }
}

function typeOf(root: unknown, path: string | undefined): string {
  let value = root;
  // devalue's path looks like `.a.b[0]`; walk it to name the offending value's type.
  for (const part of (path ?? '').match(/[^.[\]]+/g) ?? [])
    value = (value as Record<string, unknown> | undefined)?.[part];
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'object' && value !== null) return `an instance of ${value.constructor?.name ?? 'a class'}`;
  return `a ${typeof value}`;
}

export function decodeValue(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (error) {
    throw new ProtocolError(`A stored step value is not readable (${(error as Error).message}): ${text.slice(0, 80)}`, {
      cause: error,
    });
  }
}
