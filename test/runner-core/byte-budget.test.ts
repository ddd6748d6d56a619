import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../runner-core/api/byte-budget.js';

describe('ByteBudget', () => {
  it('grants what fits at once, makes the rest wait in order, and grants them as bytes come back', async () => {
    const budget = new ByteBudget(100);
    const first = await budget.take(60);
    const granted: string[] = [];
    const second = budget.take(60).then((release) => (granted.push('second'), release));
    // Fits, but waits behind the earlier taker: first come, first served.
    const third = budget.take(10).then((release) => (granted.push('third'), release));
    expect(budget.tryTake(10)).toBeUndefined();
    await Promise.resolve();
    expect(granted).toEqual([]);
    first();
    first(); // a second release gives nothing back twice
    const releases = await Promise.all([second, third]);
    expect(granted).toEqual(['second', 'third']);
    expect(budget.held).toBe(70);
    for (const release of releases) release();
    expect(budget.held).toBe(0);
  });

  it('charges a taker larger than the budget the whole budget: it goes when nothing else is held', async () => {
    const budget = new ByteBudget(100);
    const small = budget.hold(1);
    let huge: (() => void) | undefined;
    const waiting = budget.take(10_000).then((release) => (huge = release));
    await Promise.resolve();
    expect(huge).toBeUndefined();
    expect(budget.available).toBe(0);
    small();
    await waiting;
    expect(budget.held).toBe(100);
    huge!();
    expect(budget.available).toBe(100);
  });
});
