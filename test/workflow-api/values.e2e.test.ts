import { describe, expect, it } from 'vitest';
import { Counter, startThroughApp, waitForFinish } from '../helpers/runner.js';
import { useWorlds, value } from './world.js';

/** Step values are stored with devalue: what a step returns is what the next drive replays. */

const worlds = useWorlds();

const rich = () => ({
  d: new Date(0),
  m: new Map([[1, 'a']]),
  s: new Set([1]),
  b: 10n,
  u: undefined,
  nested: { x: [1, { y: undefined }] },
});

describe('step values', () => {
  it('round-trip Date, Map, Set, BigInt and undefined through the store to the next step', async () => {
    const seen: unknown[] = [];
    const { runner, app } = await worlds.setup(
      async (context) => {
        const v = await context.run('make', () => rich());
        return context.run('use', () => {
          seen.push(v);
          return {
            date: v.d instanceof Date && v.d.getTime() === 0,
            map: v.m instanceof Map && v.m.get(1) === 'a',
            set: v.s instanceof Set && v.s.has(1),
            bigint: typeof v.b === 'bigint' && v.b === 10n,
            undefinedKept: 'u' in v && v.u === undefined && 'y' in (v.nested.x[1] as object),
          };
        });
      },
      // A new drive request per step: "use" gets "make"'s value from the record, not from memory.
      { timeBudgetMs: 0 },
    );
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('completed');
    expect(attempts.map((a) => a.outcome)).toEqual(['continue', 'done']);
    expect(value(run.output)).toEqual({ date: true, map: true, set: true, bigint: true, undefinedKept: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual(rich());
    expect(value(steps[0]!.output)).toEqual(rich());
  });

  it('round-trips the workflow return value the same way', async () => {
    const { runner, app } = await worlds.setup(async () => rich());
    const { run } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    const output = value(run.output) as ReturnType<typeof rich>;
    expect(output).toEqual(rich());
    expect(output.d).toBeInstanceOf(Date);
  });

  it.each([
    [
      'a function',
      () => ({ callback: () => 1 }),
      /Cannot store the value returned by step "bad": a function at `\.callback` cannot be serialized/,
    ],
    [
      'a class instance',
      () =>
        new (class Invoice {
          total = 1;
        })(),
      /Cannot store the value returned by step "bad": an instance of Invoice cannot be serialized/,
    ],
  ])('fail a step returning %s for good, naming the step and the type', async (_label, make, message) => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      await context.run('bad', () => (calls.hit('bad'), make()));
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    // Not retryable: one execution, then the replay rethrows it and the run fails.
    expect(calls.of('bad')).toBe(1);
    expect(steps).toMatchObject([
      { name: 'bad', status: 'failed', reportedExecutions: 1, error: { code: 'SERIALIZATION' } },
    ]);
    expect(steps[0]!.error!.message).toMatch(message);
    expect(run.status).toBe('failed');
    expect(run.error!.message).toMatch(message);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed']);
  });
});
