import { describe, expect, it } from 'vitest';
import { ProtocolError, WorkflowError } from '../../protocol/errors.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';

describe('encodeValue / decodeValue', () => {
  it('round-trips what JSON cannot: Date, Map, Set, BigInt, undefined, NaN and repeated references', () => {
    const shared = { n: 1 };
    const value = {
      d: new Date(0),
      m: new Map([[1, 'a']]),
      s: new Set([1]),
      b: 10n,
      u: undefined,
      nan: Number.NaN,
      nested: { x: [1, { y: undefined }] },
      a: shared,
      again: shared,
    };
    const decoded = decodeValue(encodeValue(value, 'step "v"')) as typeof value;
    expect(decoded).toEqual(value);
    expect(decoded.d).toBeInstanceOf(Date);
    expect(decoded.m).toBeInstanceOf(Map);
    expect(decoded.s).toBeInstanceOf(Set);
    expect(typeof decoded.b).toBe('bigint');
    expect(Object.keys(decoded)).toContain('u');
    expect(decoded.again).toBe(decoded.a);
  });

  it('encodes a top-level undefined as no text at all, and reads no text as undefined', () => {
    expect(encodeValue(undefined, 'x')).toBeUndefined();
    expect(decodeValue(undefined)).toBeUndefined();
    expect(decodeValue(encodeValue(null, 'x'))).toBeNull();
  });

  it.each([
    ['a function', () => 1, 'a function cannot be serialized'],
    ['a symbol', Symbol('s'), 'a symbol cannot be serialized'],
    ['a class instance', new (class Invoice {})(), 'an instance of Invoice cannot be serialized'],
    ['an Error', new TypeError('x'), 'an instance of TypeError cannot be serialized'],
    ['a nested function', { list: [1, { f: () => 1 }] }, 'a function at `.list[1].f` cannot be serialized'],
    ['a promise', Promise.resolve(1), 'an instance of Promise cannot be serialized'],
  ])('refuses %s with a SERIALIZATION error naming where it came from and what it is', (_label, value, message) => {
    let error: unknown;
    try {
      encodeValue(value, 'step "v"');
    } catch (e) {
      error = e;
    }
    expect(WorkflowError.is(error) && error.code).toBe('SERIALIZATION');
    expect((error as Error).message).toContain(`Cannot store the value returned by step "v": ${message}`);
  });

  it('reports unreadable stored text as a ProtocolError quoting it', () => {
    expect(() => decodeValue('{not devalue')).toThrow(ProtocolError);
    expect(() => decodeValue('{not devalue')).toThrow(/A stored step value is not readable .*: \{not devalue/);
  });
});
