import { describe, expect, it } from 'vitest';
import { ProtocolError, WorkflowError } from '../../protocol/errors.js';
import { MAX_JSON_DEPTH, assertJsonDepth, parseJson } from '../../protocol/validate.js';
import { encodeValue } from '../../protocol/values.js';

const nested = (levels: number, open = '[', close = ']'): string => open.repeat(levels) + close.repeat(levels);

describe('JSON depth', () => {
  it.each([
    ['arrays at the limit', nested(MAX_JSON_DEPTH), true],
    ['arrays one past it', nested(MAX_JSON_DEPTH + 1), false],
    ['objects one past it', '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1), false],
    ['brackets inside strings', JSON.stringify({ text: '['.repeat(10_000) }), true],
    ['escaped quotes inside strings', JSON.stringify({ text: '\\"['.repeat(5_000) }), true],
    ['many siblings, shallow', JSON.stringify(Array.from({ length: 10_000 }, () => [[1]])), true],
    ['50,000 levels', nested(50_000), false],
  ])('%s: accepted %s', (_name, text, accepted) => {
    if (accepted) expect(() => parseJson(text, 'the body')).not.toThrow();
    else expect(() => parseJson(text, 'the body')).toThrow(ProtocolError);
  });

  it('names the limit, where, and the character where it was passed', () => {
    expect(() => assertJsonDepth('[[[1]]]', 'the notify body', 2)).toThrow(
      'Expected the notify body to nest objects and arrays at most 2 levels deep, got deeper nesting at character 2.',
    );
    expect(() => parseJson('[[1]]', 'x', 1)).toThrow(/at most 1 levels/);
  });

  it('still reports malformed JSON as such', () => {
    expect(() => parseJson('{"a": ', 'the request body')).toThrow(/^Malformed JSON in the request body/);
  });
});

describe('encodeValue on deep values', () => {
  it('refuses a value nested past the stack with a SERIALIZATION error, not a RangeError', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let error: unknown;
    try {
      encodeValue(deep, 'step "deep"');
    } catch (caught) {
      error = caught;
    }
    expect(WorkflowError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SERIALIZATION', message: expect.stringContaining('nested too deeply') });
    expect((error as Error).message).toContain('step "deep"');
  });
});
