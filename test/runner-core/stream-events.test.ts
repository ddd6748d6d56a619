import { describe, expect, it, vi } from 'vitest';
import { coalesce } from '../../api/coalesce.js';
import { EventBus } from '../../runner-core/commit/events.js';
import { OMITTED_WHEN_SLIM, eventRunId, fillAttempt, fillRun, fillStep, isSlim, slimEvent } from '../../api/events.js';
import { makeAttempt, makeRun, makeStep, runId } from '../tui/fixtures.js';

describe('slim events', () => {
  it('leave out exactly the documented fields and say so', () => {
    const run = makeRun(1);
    const slim = slimEvent({ type: 'run', run });
    expect(isSlim(slim)).toBe(true);
    expect(isSlim({ type: 'run', run })).toBe(false);
    expect(Object.keys(run).filter((key) => !(key in slim.run))).toEqual(
      OMITTED_WHEN_SLIM.run.filter((key) => key in run),
    );
    const step = slimEvent({ type: 'step', step: makeStep(1, 0) });
    expect(Object.keys(makeStep(1, 0)).filter((key) => !(key in step.step))).toEqual(
      OMITTED_WHEN_SLIM.step.filter((key) => key in makeStep(1, 0)),
    );
    const attempt = slimEvent({ type: 'attempt', attempt: makeAttempt(1, 1) });
    expect(
      Object.keys(makeAttempt(1, 1))
        .filter((key) => !(key in attempt.attempt))
        .sort(),
    ).toEqual([...OMITTED_WHEN_SLIM.attempt].sort());
    expect([eventRunId(slim), eventRunId(step), eventRunId(attempt)]).toEqual([runId(1), runId(1), runId(1)]);
  });

  it('fill back from the copy held, or with empty bodies', () => {
    const held = makeRun(1, { body: '{"n":1}', outputEncoded: '[1]' });
    const newer = { ...makeRun(1, { status: 'failed', updatedAt: held.updatedAt + 1 }) };
    const slim = slimEvent({ type: 'run', run: newer });
    expect(fillRun(held, slim.run)).toEqual({ ...newer, body: '{"n":1}', headers: held.headers, outputEncoded: '[1]' });
    expect(fillRun(undefined, slim.run)).toMatchObject({
      body: '',
      headers: {},
      outputEncoded: null,
      status: 'failed',
    });
    expect(fillStep(undefined, slimEvent({ type: 'step', step: makeStep(1, 0) }).step)).toMatchObject({
      outputEncoded: null,
      request: null,
    });
    expect(fillAttempt(makeAttempt(1, 1), slimEvent({ type: 'attempt', attempt: makeAttempt(1, 1) }).attempt)).toEqual(
      makeAttempt(1, 1),
    );
    // A whole event replaces what was held.
    expect(fillRun(held, newer)).toEqual(newer);
  });

  it('are numbered by the bus, rising', () => {
    const bus = new EventBus();
    const ids: number[] = [];
    bus.subscribe((_event, id) => ids.push(id));
    for (let i = 0; i < 3; i++) bus.emit({ type: 'attempt', attempt: makeAttempt(i, 1) });
    expect(ids).toEqual([1, 2, 3]);
  });
});

describe('coalesce', () => {
  it('runs once for a burst, and once more for requests during a run', async () => {
    let runs = 0;
    let release!: () => void;
    let gate = new Promise<void>((resolve) => (release = resolve));
    const request = coalesce(async () => {
      runs++;
      await gate;
    }, 5);
    for (let i = 0; i < 50; i++) request();
    await vi.waitFor(() => expect(runs).toBe(1));
    for (let i = 0; i < 50; i++) request(); // while it runs
    const first = release;
    gate = new Promise<void>((resolve) => (release = resolve));
    first();
    await vi.waitFor(() => expect(runs).toBe(2));
    release();
    request();
    await vi.waitFor(() => expect(runs).toBe(3));
  });

  it('with delayMs 0 starts at once (no timer turn), and still runs once more for requests during a run', async () => {
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const request = coalesce(async () => {
      runs++;
      await gate;
    }, 0);
    request();
    expect(runs).toBe(1); // synchronously: the scheduler's wake must not wait a timer turn
    for (let i = 0; i < 10; i++) request();
    expect(runs).toBe(1);
    release();
    await vi.waitFor(() => expect(runs).toBe(2));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(2);
  });

  it('keeps going after a failed run', async () => {
    let runs = 0;
    const request = coalesce(async () => {
      runs++;
      throw new Error('the runner did not answer');
    }, 1);
    request();
    await vi.waitFor(() => expect(runs).toBe(1));
    request();
    await vi.waitFor(() => expect(runs).toBe(2));
  });
});
