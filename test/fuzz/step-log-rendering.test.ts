import { describe, expect, it } from 'vitest';
import type { Attempt, Run, Step, StepLog } from '../../api/dto.js';
import type { AttemptOutcome } from '../../api/attempt-outcome.js';
import { eventLine, runStory } from '../../cli/lib/format.js';
import { stepLogLines, stepLogsHint } from '../../cli/lib/step-logs.js';
import { terminalLine } from '../../tui/format.js';
import { stepViewLines } from '../../tui/step-lines.js';
import { terminalSafe } from '../../view/terminal-text.js';
import { seededRandom, seedFromEnv, type SeededRandom } from '../helpers/seeded-random.js';
import { hasRawControl, HOSTILE } from '../helpers/hostile-text.js';

/**
 * Step-log rendering under seeded hostile text (WF_FUZZ_SEED replays it): log messages, field keys
 * and values, step names, errors, URLs, headers and bodies built from control characters, escape
 * sequences, bidi controls, lone surrogates and CRLFs, rendered the way `wf logs` (text), `wf dev
 * --no-tui` and the terminal dashboard's step view do. No rendered line holds a character a
 * terminal would act on; and plain text passes unchanged.
 */

const seed = seedFromEnv();
const CASES = 2_000;

const PIECES = [
  ...HOSTILE.map((h) => h.text),
  '\u001b',
  '\u001b[',
  '\u001b]',
  '\u009b',
  '\u009d',
  '\u0007',
  '\r',
  '\r\n',
  '\n',
  '\t',
  '\u0000',
  '\u007f',
  '\ud800',
  '\udfff',
  '\ud83d\ude00',
  '\u202e',
  '\u2066',
  '\u200f',
  '\u061c',
  '\u2028',
  '\u2029',
  '\ufeff',
  'é',
  '日本',
  ' ',
  '=',
  '"',
  '\\',
  '\\x1b',
  'plain',
];

function hostileText(random: SeededRandom): string {
  const length = random.between(0, 12);
  let text = '';
  for (let i = 0; i < length; i++)
    text += random.chance(0.2) ? String.fromCharCode(random.int(0x2070)) : random.pick(PIECES);
  return text;
}

function hostileFields(random: SeededRandom): Record<string, unknown> | undefined {
  if (random.chance(0.3)) return undefined;
  return Object.fromEntries(
    Array.from({ length: random.between(1, 4) }, () => [
      hostileText(random),
      random.pick<unknown>([
        hostileText(random),
        1,
        null,
        { [hostileText(random)]: hostileText(random) },
        [hostileText(random)],
      ]),
    ]),
  );
}

const RUN_ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

function world(random: SeededRandom): { run: Run; step: Step; attempts: Attempt[]; logs: StepLog[] } {
  const error = {
    name: hostileText(random),
    message: hostileText(random),
    stack: `${hostileText(random)}\n    at ${hostileText(random)}`,
  };
  const run = {
    id: RUN_ID,
    url: `http://127.0.0.1:3000/${hostileText(random)}`,
    status: 'failed',
    body: hostileText(random),
    headers: { [hostileText(random)]: hostileText(random) },
    createdAt: T0,
    updatedAt: T0 + 10,
    finishedAt: T0 + 10,
    nextAt: null,
    failures: 0,
    retries: 0,
    retryDelayMs: 0,
    stepsDone: 1,
    attempts: 1,
    error,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    alert: null,
    alertAttempts: 0,
    protocol: 'wf',
    outputEncoded: null,
  } as unknown as Run;
  const step = {
    runId: RUN_ID,
    index: 0,
    name: hostileText(random),
    kind: 'run',
    status: 'failed',
    error,
    startedAt: T0,
    finishedAt: T0 + 5,
    durationMs: 5,
    reportedExecutions: 1,
    failures: 1,
    group: null,
    until: null,
    eventId: null,
    request: null,
    output: hostileText(random),
    outputEncoded: null,
  } as unknown as Step;
  const attempts: Attempt[] = [
    {
      runId: RUN_ID,
      seq: 1,
      startedAt: T0,
      durationMs: 5,
      requestUrl: run.url,
      requestHeaders: { [hostileText(random)]: hostileText(random) },
      requestBody: JSON.stringify({ a: hostileText(random) }),
      responseStatus: 200,
      responseHeaders: { [hostileText(random)]: hostileText(random) },
      responseBody: hostileText(random),
      outcome: hostileText(random) as AttemptOutcome,
      error,
    },
  ];
  const lines = Array.from({ length: random.between(1, 6) }, () => ({
    at: T0,
    level: random.pick(['debug', 'info', 'log', 'warn', 'error'] as const),
    message: hostileText(random),
    ...(() => {
      const fields = hostileFields(random);
      return fields ? { fields } : {};
    })(),
  }));
  const logs: StepLog[] = [
    { runId: RUN_ID, index: 0, name: step.name, attempt: 1, status: 'failed', at: T0, dropped: random.int(3), lines },
  ];
  return { run, step, attempts, logs };
}

/** The lines of `lines` a terminal would act on, each with the case that printed it (one `expect` at the end: thousands are slow). */
function unsafe(lines: readonly string[], where: string, seedCase: string, moving: RegExp): string[] {
  return lines
    .filter((line) => hasRawControl(line) || moving.test(line))
    .map((line) => `${seedCase}: ${where} printed ${JSON.stringify(line)}`);
}

describe(`fuzz: step-log rendering (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it(`renders ${CASES} hostile runs without a raw control character in any line`, () => {
    const found: string[] = [];
    for (let index = 0; index < CASES && found.length < 20; index++) {
      const random = seededRandom((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
      const seedCase = `WF_FUZZ_SEED=${seed} case #${index}`;
      const { run, step, attempts, logs } = world(random);
      const detail = { run, steps: [step], attempts, logs };
      const cli = [
        ...stepLogLines(detail, '0', false),
        stepLogsHint(detail) ?? '',
        ...runStory(run, [step], attempts),
        eventLine({ type: 'step', step }),
        eventLine({ type: 'attempt', attempt: attempts[0]! }),
      ];
      // Text modes keep lines apart: no carriage return or other line-moving character survives;
      // the dashboard's lines are single lines, tabs expanded.
      found.push(...unsafe(cli, 'wf logs', seedCase, /[\r\u2028\u2029]/));
      found.push(
        ...unsafe(
          stepViewLines(step, attempts, random.between(20, 160), logs, run).map((l) => l.text),
          'the step view',
          seedCase,
          /[\n\t]/,
        ),
      );
      found.push(...unsafe([terminalLine(hostileText(random))], 'a dashboard cell', seedCase, /[\n\t]/));
    }
    expect(found).toEqual([]);
  });

  it('leaves text with no control character as it is', () => {
    const random = seededRandom(seed);
    for (let i = 0; i < 500; i++) {
      const plain = Array.from({ length: random.between(0, 20) }, () =>
        random.pick(['a', 'é', '日本', ' ', '\n', '\t', '"', '\\', '\ud83d\ude00', '=', '…']),
      ).join('');
      expect(terminalSafe(plain)).toBe(plain);
    }
  });
});
