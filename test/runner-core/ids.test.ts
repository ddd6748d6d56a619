import { describe, expect, it } from 'vitest';
import { RUN_ID_PATTERN, newRunId } from '../../runner-core/ids.js';

const FORMAT = /^wfr_[0-9A-HJKMNP-TV-Z]{26}$/;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The 48-bit time part of an id, decoded from its first 10 characters. */
function timeOf(id: string): number {
  return [...id.slice(4, 14)].reduce((t, c) => t * 32 + ALPHABET.indexOf(c), 0);
}

describe('newRunId', () => {
  it('is wfr_ + 26 Crockford base32 characters, and RUN_ID_PATTERN says so too', () => {
    const id = newRunId();
    expect(id).toMatch(FORMAT);
    expect(RUN_ID_PATTERN.test(id)).toBe(true);
    expect(RUN_ID_PATTERN.test('wfr_' + 'I'.repeat(26))).toBe(false);
    expect(RUN_ID_PATTERN.test('wfr_' + '0'.repeat(25))).toBe(false);
  });

  it('encodes the creation time in its first 10 characters', () => {
    const now = Date.now() + 60_000;
    expect(timeOf(newRunId(now))).toBe(now);
  });

  it('makes 10,000 unique, strictly increasing ids within one millisecond', () => {
    const now = Date.now() + 120_000; // later than any id made so far, so a fresh random part
    const ids = Array.from({ length: 10_000 }, () => newRunId(now));
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i]! > ids[i - 1]!))
        throw new Error(`id ${i} (${ids[i]}) does not sort after id ${i - 1} (${ids[i - 1]})`);
    }
    for (const id of ids) expect(id).toMatch(FORMAT);
  });

  it('keeps increasing when the clock steps back', () => {
    const now = Date.now() + 180_000;
    const first = newRunId(now);
    const second = newRunId(now - 5_000);
    expect(second > first).toBe(true);
  });

  it('sorts by time across milliseconds', () => {
    const now = Date.now() + 240_000;
    const ids = [newRunId(now), newRunId(now + 1), newRunId(now + 1_000), newRunId(now + 86_400_000)];
    expect([...ids].sort()).toEqual(ids);
  });
});
