import { describe, expect, it } from 'vitest';
import type { StepLog } from '../../api/dto.js';
import { logRowText, logSection, logsOfStep, logText, logTime, stepLogSections } from '../../view/step-logs.js';

const log = (index: number, attempt: number, patch: Partial<StepLog> = {}): StepLog => ({
  runId: 'wfr_1',
  index,
  name: `s${index}`,
  attempt,
  status: 'succeeded',
  at: 0,
  lines: [],
  dropped: 0,
  ...patch,
});

describe('step logs view model', () => {
  it("picks one step's executions, oldest attempt first", () => {
    const logs = [log(1, 5), log(0, 1), log(1, 2, { status: 'failed' })];
    expect(logsOfStep(logs, 1).map((l) => [l.attempt, l.status])).toEqual([
      [2, 'failed'],
      [5, 'succeeded'],
    ]);
    expect(stepLogSections(logs, 3)).toEqual([]);
  });

  it('writes a line as time, level, message and fields (values as JSON)', () => {
    expect(logText({ message: 'charged', fields: { amount: 42, currency: 'EUR', ok: true, tags: ['a'] } })).toBe(
      'charged amount=42 currency="EUR" ok=true tags=["a"]',
    );
    expect(logText({ message: 'plain', fields: {} })).toBe('plain');
    const at = new Date(2026, 0, 2, 3, 4, 5, 60).getTime();
    expect(logTime(at)).toBe('03:04:05.060');
    expect(logTime(Number.NaN)).toBe('--:--:--.---');
    const section = logSection(
      log(0, 3, { status: 'failed', dropped: 7, lines: [{ at, level: 'warn', message: 'slow' }] }),
    );
    expect(section.heading).toBe('attempt 3 · failed · 1 line, 7 more not kept');
    expect(section.rows).toEqual([{ time: '03:04:05.060', level: 'warn', tone: 'warn', text: 'slow' }]);
    expect(logRowText(section.rows[0]!)).toBe('03:04:05.060 warn  slow');
    expect(section.truncated).toBe('… 7 more lines not kept (a step keeps 1,000 lines, 64 KiB)');
    expect(
      logSection(
        log(0, 1, {
          lines: [
            { at, level: 'debug', message: 'x' },
            { at, level: 'error', message: 'y' },
          ],
        }),
      ).rows.map((r) => r.tone),
    ).toEqual(['dim', 'error']);
    expect(logSection(log(0, 1)).truncated).toBeUndefined();
  });
});
