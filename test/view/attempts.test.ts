import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../protocol/outcome.js';
import {
  attemptsForStep,
  attemptsOfStep,
  deliveriesForStep,
  plannedStepOf,
  stepsOfAttempt,
  indexesOf,
  isLineOf,
  noAttemptsText,
  outcomeLines,
  stepIndexesOf,
} from '../../view/attempts.js';
import { attempt, run, step, T0 } from './records.js';

const started = (index: number): Outcome => ({ t: 'started', index, name: `s${index}`, kind: 'run', group: 0 });
const finished = (index: number): Outcome => ({
  t: 'step',
  index,
  name: `s${index}`,
  kind: 'run',
  output: '[1]',
  durationMs: 1,
});
const boom = { name: 'Error', message: 'boom' };

describe('indexesOf', () => {
  it.each<[string, Outcome, number[]]>([
    ['started', started(3), [3]],
    ['step', finished(4), [4]],
    [
      'failed in a step',
      { t: 'failed', error: boom, retryable: true, step: { index: 2, name: 's2', kind: 'run', durationMs: 1 } },
      [2],
    ],
    ['failed outside any step', { t: 'failed', error: boom, retryable: false }, []],
    [
      'suspend',
      {
        t: 'suspend',
        steps: [
          { kind: 'sleep', index: 1, name: 'nap', group: 1, until: 5 },
          { kind: 'wait', index: 2, name: 'ev', group: 1, eventId: 'e', until: 9 },
        ],
      },
      [1, 2],
    ],
    ['done', { t: 'done', output: '[1]' }, []],
    ['continue', { t: 'continue' }, []],
    ['cancel', { t: 'cancel' }, []],
  ])('%s', (_name, outcome, indexes) => expect(indexesOf(outcome)).toEqual(indexes));
});

describe('which attempts concern a step', () => {
  const attempts = [
    attempt(1, [
      started(0),
      finished(0),
      { t: 'suspend', steps: [{ kind: 'sleep', index: 1, name: 'nap', group: 1, until: 5 }] },
    ]),
    attempt(2, [
      { t: 'failed', error: boom, retryable: true, step: { index: 2, name: 's2', kind: 'run', durationMs: 1 } },
    ]),
    // A cut stream: the half line is shown but speaks of nothing.
    attempt(3, [started(3)], '{"t":"step","index":3,"na'),
    { ...attempt(4, []), responseBody: 'not ndjson' },
    { ...attempt(5, []), responseBody: null },
  ];

  it.each([
    [0, [1]],
    [1, [1]],
    [2, [2]],
    [3, [3]],
    [4, []],
  ])('step %i: attempts %j', (index, seqs) => expect(attemptsForStep(attempts, index).map((a) => a.seq)).toEqual(seqs));

  it('reads lines through decodeOutcome: a JSON line that is not a valid outcome speaks of nothing', () => {
    const forged = { ...attempt(6, []), responseBody: '{"t":"started","index":0}\n' };
    expect(stepIndexesOf(forged).size).toBe(0);
  });

  it("marks the step's own lines and keeps every line's text", () => {
    const lines = outcomeLines(attempts[2]!);
    expect(lines.map((l) => l.text)).toEqual([JSON.stringify(started(3)), '{"t":"step","index":3,"na']);
    expect(lines.map((l) => isLineOf(l, 3))).toEqual([true, false]);
    expect(outcomeLines(attempts[2]!)).toBe(lines);
  });
});

describe('which deliveries ran an Upstash-protocol step', () => {
  // A QStash delivery: the SDK's answer (no outcome lines), the message it carried in its headers.
  const delivery = (seq: number, startedAt: number, messageId: string, status = 200) => ({
    ...attempt(seq, []),
    startedAt,
    requestHeaders: { 'upstash-message-id': messageId },
    responseStatus: status,
    responseBody: '{"workflowRunId":"wfr_x"}',
  });
  const attempts = [
    delivery(1, T0, 'msg_init'),
    // msg_a delivered twice: the step after it failed once (500), then its result was published.
    delivery(2, T0 + 100, 'msg_a', 500),
    delivery(3, T0 + 300, 'msg_a'),
    delivery(4, T0 + 500, 'msg_b'),
  ];
  // The engine keeps the producing delivery's start: finishedAt - durationMs.
  const a = step({ index: 1, name: 'a', status: 'succeeded', finishedAt: T0 + 40, durationMs: 40 });
  const b = step({ index: 2, name: 'b', status: 'succeeded', finishedAt: T0 + 350, durationMs: 50 });

  it('links a step to the delivery that produced it and the earlier tries of the same message', () => {
    expect(deliveriesForStep(attempts, a).map((x) => x.seq)).toEqual([1]);
    expect(deliveriesForStep(attempts, b).map((x) => x.seq)).toEqual([2, 3]);
  });

  it('links nothing for a run step without a producing delivery (a running one)', () => {
    expect(deliveriesForStep(attempts, step({ index: 3 }))).toEqual([]);
    expect(
      deliveriesForStep(attempts, step({ index: 3, kind: 'sleep', finishedAt: T0 + 900, durationMs: 10 })),
    ).toEqual([]);
  });

  it("links a sleep, wait or call to the deliveries that resolved it: its result delivered, a call's request and callback", () => {
    const list = (stepJson: object) =>
      JSON.stringify([
        { messageId: 'msg_init', body: btoa('{}'), callType: 'step' },
        { messageId: 'msg_r', body: btoa(JSON.stringify(stepJson)), callType: 'step' },
      ]);
    const resolved = [
      {
        ...delivery(10, T0 + 1_000, 'msg_sleep', 500),
        requestBody: list({ stepId: 3, stepName: 'nap', stepType: 'SleepFor' }),
      },
      {
        ...delivery(11, T0 + 1_100, 'msg_sleep'),
        requestBody: list({ stepId: 3, stepName: 'nap', stepType: 'SleepFor' }),
      },
      { ...delivery(12, T0 + 1_200, 'msg_call'), requestBody: '{"ping":1}' },
      {
        ...delivery(13, T0 + 1_300, 'msg_cb'),
        requestHeaders: { 'upstash-message-id': 'msg_cb', 'upstash-workflow-stepid': '4' },
        requestBody: '{"status":200,"sourceMessageId":"msg_call"}',
      },
      {
        ...delivery(14, T0 + 1_400, 'msg_other'),
        requestBody: list({ stepId: 5, stepName: 'after', stepType: 'Run' }),
      },
    ];
    expect(
      deliveriesForStep(resolved, step({ index: 3, kind: 'sleep', finishedAt: T0 + 1_100, durationMs: 900 })).map(
        (x) => x.seq,
      ),
    ).toEqual([10, 11]);
    expect(
      deliveriesForStep(resolved, step({ index: 4, kind: 'call', finishedAt: T0 + 1_300, durationMs: 200 })).map(
        (x) => x.seq,
      ),
    ).toEqual([12, 13]);
    expect(deliveriesForStep(resolved, step({ index: 6, kind: 'wait', finishedAt: null, durationMs: null }))).toEqual(
      [],
    );
  });

  it('does not group deliveries whose headers were redacted', () => {
    const redacted = attempts.map((x) => ({ ...x, requestHeaders: { 'upstash-message-id': '[redacted]' } }));
    expect(deliveriesForStep(redacted, b).map((x) => x.seq)).toEqual([3]);
  });

  it('tells parallel branches apart by the plan step each delivery carried, though they started together', () => {
    // The SDK's body: the run's messages, the delivered one last (a plan step: stepId 0, targetStep n).
    const body = (target: number) =>
      JSON.stringify([
        { messageId: 'msg_init', body: btoa('{}'), callType: 'step' },
        {
          messageId: `msg_p${target}`,
          body: btoa(JSON.stringify({ stepId: 0, stepName: `s${target}`, stepType: 'Run', targetStep: target })),
          callType: 'step',
        },
      ]);
    const plans = [
      { ...delivery(7, T0 + 900, 'msg_p3'), requestBody: body(3) },
      { ...delivery(8, T0 + 900, 'msg_p4'), requestBody: body(4) },
    ];
    expect(plans.map(plannedStepOf)).toEqual([3, 4]);
    expect(
      deliveriesForStep(plans, step({ index: 4, finishedAt: T0 + 950, durationMs: 50 })).map((x) => x.seq),
    ).toEqual([8]);
    expect(
      deliveriesForStep(plans, step({ index: 3, finishedAt: T0 + 990, durationMs: 90 })).map((x) => x.seq),
    ).toEqual([7]);
    // A body that is not there to read (lazy fetch, clipped, redacted) names no branch.
    expect(
      ['', '[redacted]', '[{"messageId":"m","body":"e30="}… [9 more characters]'].map((requestBody) =>
        plannedStepOf({ ...delivery(9, T0, 'm'), requestBody }),
      ),
    ).toEqual([undefined, undefined, undefined]);
  });

  it('names, for each delivery, the steps it ran', () => {
    const upstash = run({ protocol: 'upstash' });
    expect(attempts.map((x) => stepsOfAttempt(upstash, attempts, [a, b], x).map((s) => s.name))).toEqual([
      ['a'],
      ['b'],
      ['b'],
      [],
    ]);
    // A native run: the steps its outcome lines speak of (none here).
    expect(stepsOfAttempt(run(), attempts, [a, b], attempts[1]!)).toEqual([]);
  });

  it("chooses by the run's protocol", () => {
    expect(attemptsOfStep(run({ protocol: 'upstash' }), attempts, b).map((x) => x.seq)).toEqual([2, 3]);
    // A native run reads outcome lines: these deliveries have none.
    expect(attemptsOfStep(run(), attempts, b)).toEqual([]);
    expect(noAttemptsText(run({ protocol: 'upstash' }))).toContain('No delivery ran this step');
    expect(noAttemptsText(run())).toBe('No drive response mentions this step.');
  });
});
