import { afterEach, describe, expect, it, vi } from 'vitest';
import { Header, NDJSON } from '../../protocol/headers.js';
import { encodeOutcome, type Outcome } from '../../protocol/outcome.js';
import type { Change } from '../../runner-core/store/types.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';

/**
 * Steps that reach the runner with the terminal line are committed in the run's settle commit
 * (runner-core/drive/attempt.ts `holdLast`): nothing acts on them before it, so the last steps and
 * the end cost one fsync, not two. Steps read before the terminal line are still committed as they come.
 */

afterEach(closeStarted);

const started = (index: number, name: string): Outcome => ({ t: 'started', index, name, kind: 'run', group: 1 });
const step = (index: number, name: string): Outcome => ({
  t: 'step',
  index,
  name,
  kind: 'run',
  output: String(index),
  durationMs: 1,
});

/** A runner whose store records the changes of every transaction, and an app answering `chunks` (written apart). */
async function answering(chunks: Outcome[][]) {
  const runner = await startTestRunner();
  const transactions: Change[][] = [];
  const apply = runner.store.apply.bind(runner.store);
  vi.spyOn(runner.store, 'apply').mockImplementation(async (changes, options) => {
    transactions.push([...changes]);
    return apply(changes, options);
  });
  const app = await startApp(async () => {}, {
    token: runner.token,
    runnerUrl: runner.url,
    wrap: (handler) => async (req, res) => {
      if (req.headers[Header.Signature] === undefined) return handler(req, res);
      res.writeHead(200, { 'content-type': NDJSON });
      for (const [i, chunk] of chunks.entries()) {
        const text = chunk.map(encodeOutcome).join('');
        if (i === chunks.length - 1) res.end(text);
        // Apart: the runner reads this chunk (and commits it) before the next one is sent.
        else await new Promise<void>((resolve) => res.write(text, () => setTimeout(resolve, 50)));
      }
    },
  });
  const id = await startThroughApp(app.url);
  const { run, steps } = await waitForFinish(runner.runner, id);
  // A step whose start came in the same chunk is one change that records both (drive/chunk-changes.ts).
  const stepsIn = (changes: Change[]) =>
    changes.flatMap((c) =>
      c.type === 'step-started' || c.type === 'step-succeeded'
        ? [`${c.type}${c.type === 'step-succeeded' && c.started ? ' (with its start)' : ''} ${c.index}`]
        : [],
    );
  const ending = transactions.find((changes) =>
    changes.some((c) => c.type === 'run' && c.patch.status === 'completed'),
  );
  const others = transactions.filter((changes) => changes !== ending).flatMap(stepsIn);
  return { run, steps, inEnd: ending ? stepsIn(ending) : [], others };
}

describe('the last steps of a drive', () => {
  it('are committed with the end when they come with the terminal line', async () => {
    const done: Outcome = { t: 'done' };
    const { run, steps, inEnd, others } = await answering([
      [started(0, 'a'), step(0, 'a'), started(1, 'b'), step(1, 'b'), done],
    ]);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => [s.name, s.status, s.output])).toEqual([
      ['a', 'succeeded', '0'],
      ['b', 'succeeded', '1'],
    ]);
    expect(inEnd).toEqual(['step-succeeded (with its start) 0', 'step-succeeded (with its start) 1']);
    expect(others).toEqual([]);
  });

  it('are committed as they come when the terminal line is read later', async () => {
    const { run, inEnd, others } = await answering([
      [started(0, 'a'), step(0, 'a')],
      [started(1, 'b'), step(1, 'b'), { t: 'done' }],
    ]);
    expect(run.status).toBe('completed');
    expect(others).toEqual(['step-succeeded (with its start) 0']);
    expect(inEnd).toEqual(['step-succeeded (with its start) 1']);
  });
});
