import { describe, expect, it } from 'vitest';
import { nextDelay, parseRetryAfter } from '../../runner-core/drive/retry.js';

describe('nextDelay', () => {
  const policy = { retries: 5, baseMs: 100 };

  // Equal jitter: half of the exponential delay is fixed, half random.
  it.each([
    { failures: 1, low: 50, high: 100 },
    { failures: 2, low: 100, high: 200 },
    { failures: 3, low: 200, high: 400 },
    { failures: 4, low: 400, high: 800 },
    { failures: 5, low: 800, high: 1600 },
  ])('retry $failures waits $low ms with random 0 and $high ms with random 1', ({ failures, low, high }) => {
    expect(nextDelay(failures, policy, () => 0)).toBe(low);
    expect(nextDelay(failures, policy, () => 1)).toBe(high);
    const middle = nextDelay(failures, policy, () => 0.5);
    expect(middle).toBeGreaterThan(low);
    expect(middle).toBeLessThan(high);
  });

  it('caps one delay at maxMs, jitter included', () => {
    const capped = { retries: 10, baseMs: 100, maxMs: 500 };
    expect(nextDelay(3, capped, () => 1)).toBe(400);
    expect(nextDelay(4, capped, () => 0)).toBe(250);
    expect(nextDelay(4, capped, () => 1)).toBe(500);
    expect(nextDelay(9, capped, () => 1)).toBe(500);
  });

  it('caps at one hour by default', () => {
    expect(nextDelay(40, { retries: 50, baseMs: 1000 }, () => 1)).toBe(60 * 60 * 1000);
  });

  it('treats 0 failures like the first retry, and uses Math.random by default', () => {
    expect(nextDelay(0, policy, () => 1)).toBe(100);
    for (let i = 0; i < 100; i++) {
      const delay = nextDelay(2, policy);
      expect(delay).toBeGreaterThanOrEqual(100);
      expect(delay).toBeLessThanOrEqual(200);
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 0, 0, 0);

  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    [' 3 ', 3000],
  ])('reads delta-seconds %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it('reads an HTTP date as the time left until it, and a past date as 0', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it.each(['soon', '12 apples', '1.5', '-5', 'abc 2', '1e3'])('ignores garbage %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it.each([[''], ['   '], [null], [undefined]])('ignores an empty or absent header (%j)', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
