import { describe, expect, it } from 'vitest';
import { parseAttempt, parseRun, parseRunDetail, parseStep, parseStreamEvent } from '../../api/parse.js';
import { createSseParser, type SseMessage } from '../../api/sse-parser.js';
import type { Run } from '../../api/dto.js';
import { fillRun, slimEvent } from '../../api/events.js';
import { makeAttempt, makeRun, makeStep } from '../tui/fixtures.js';

/** The contract's parsers: they accept what the runner sends and name what is wrong otherwise. */

describe('parsers of the API answers', () => {
  it('accept the records as the runner sends them, whole and slim, and a reset', () => {
    const run = { ...makeRun(1), output: { a: 1 }, outputEncoded: '[{"a":1},1]' };
    expect(parseRun(JSON.parse(JSON.stringify(run)))).toEqual(run);
    expect(parseStep(makeStep(1, 0))).toEqual(makeStep(1, 0));
    expect(parseAttempt(makeAttempt(1, 1))).toEqual(makeAttempt(1, 1));
    const slim = slimEvent({ type: 'run', run });
    expect(parseStreamEvent(JSON.parse(JSON.stringify(slim)))).toEqual(slim);
    expect(parseStreamEvent({ type: 'reset' })).toEqual({ type: 'reset' });
  });

  it("keep a failed run's alert fields, and only when the run has an alert", () => {
    const alerted = { ...makeRun(2, { status: 'failed' }), alert: 'pending', alertAttempts: 2 };
    expect(parseRun(JSON.parse(JSON.stringify(alerted)))).toEqual(alerted);
    // An older runner's run has none; this runner sends null for a run that owes none.
    expect(parseRun(makeRun(1))).not.toHaveProperty('alert');
    expect(parseRun({ ...makeRun(1), alert: null, alertAttempts: 0 })).toMatchObject({ alert: null, alertAttempts: 0 });
    // A resumed run's event (alert null) clears the alert a dashboard knew.
    expect(
      fillRun(alerted as Run, { ...makeRun(2, { status: 'running' }), alert: null, alertAttempts: 0 }).alert,
    ).toBeNull();
    expect(() => parseRun({ ...alerted, alert: 'sent' })).toThrow(
      'Expected `alert` in the run to be one of pending, delivered, failed, got the string "sent".',
    );
    expect(() => parseRun({ ...alerted, alertAttempts: undefined })).toThrow(
      'Expected `alertAttempts` in the run to be',
    );
  });

  it('name the field, what was expected and what came, and where', () => {
    expect(() => parseRun({ ...makeRun(1), status: 'done' })).toThrow(
      'Expected `status` in the run to be one of queued, running, sleeping, waiting, completed, failed, cancelled, got the string "done".',
    );
    expect(() => parseRun({ ...makeRun(1), body: undefined })).toThrow(
      'Expected `body` in the run to be a string, got undefined.',
    );
    expect(() => parseStep({ ...makeStep(1, 0), outputEncoded: 5 })).toThrow(
      'Expected `outputEncoded` in the step to be a string, got number 5.',
    );
    expect(() =>
      parseRunDetail({ run: makeRun(1), steps: [makeStep(1, 0), { ...makeStep(1, 1), kind: 'job' }], attempts: [] }),
    ).toThrow(
      'Expected `kind` in `steps[1]` of the run detail to be one of run, sleep, wait, call, invoke, got "job".',
    );
    expect(() => parseStreamEvent({ type: 'step', step: null })).toThrow(
      'Expected `step` of the event to be a JSON object, got null.',
    );
    expect(() => parseStreamEvent({ type: 'ping' })).toThrow(
      'Expected `type` in the event to be one of run, step, attempt, reset, got the string "ping".',
    );
  });
});

describe('the SSE parser', () => {
  it('reads events split anywhere across chunks, with CRLF, comments, ids and multi-line data', () => {
    const seen: SseMessage[] = [];
    const feed = createSseParser((message) => seen.push(message));
    const text = ': connected\r\n\r\nid: 7\r\nevent: run\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: reset\ndata: {}\n\n';
    for (const char of text) feed(char);
    expect(seen).toEqual([
      { event: 'run', data: '{"a":\n1}', id: '7' },
      { event: 'reset', data: '{}', id: undefined },
    ]);
  });
});

describe('step logs in the run detail', () => {
  const log = {
    runId: makeRun(1).id,
    index: 0,
    name: 'a',
    attempt: 2,
    status: 'failed',
    at: 5,
    lines: [{ at: 4, level: 'warn', message: 'hm', fields: { n: 1 } }],
    dropped: 3,
  };
  it('reads them, and reads a detail without them (an older runner) as none', () => {
    const detail = { run: makeRun(1), steps: [makeStep(1, 0)], attempts: [] };
    expect(parseRunDetail({ ...detail, logs: [log] }).logs).toEqual([log]);
    expect(parseRunDetail(detail).logs).toEqual([]);
  });
  it('names what is wrong', () => {
    const detail = { run: makeRun(1), steps: [], attempts: [] };
    expect(() => parseRunDetail({ ...detail, logs: [{ ...log, status: 'maybe' }] })).toThrow(
      'Expected `status` in `logs[0]` of the run detail to be one of succeeded, failed, got the string "maybe".',
    );
    expect(() =>
      parseRunDetail({ ...detail, logs: [{ ...log, lines: [{ at: 1, level: 'loud', message: '' }] }] }),
    ).toThrow(
      'Expected `level` in `lines[0]` in `logs[0]` of the run detail to be one of debug, info, log, warn, error, got the string "loud".',
    );
  });
});
