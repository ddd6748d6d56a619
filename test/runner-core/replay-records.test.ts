import { describe, expect, it } from 'vitest';
import { toReplayRecords } from '../../runner-core/drive/replay-records.js';
import type { Step, StepStatus } from '../../runner-core/store/types.js';

const step = (index: number, status: StepStatus, patch: Partial<Step> = {}): Step => ({
  runId: 'wfr_1',
  index,
  name: `s${index}`,
  kind: 'run',
  status,
  output: status === 'succeeded' ? `[${index}]` : null,
  error: null,
  startedAt: 0,
  finishedAt: null,
  durationMs: null,
  reportedExecutions: 1,
  failures: 0,
  group: 1,
  until: null,
  eventId: null,
  request: null,
  ...patch,
});

describe('toReplayRecords', () => {
  it('carries finished steps with their output or error', () => {
    const error = { name: 'Error', message: 'no' };
    expect(
      toReplayRecords([step(0, 'succeeded'), step(1, 'succeeded', { output: null }), step(2, 'failed', { error })]),
    ).toEqual([
      { index: 0, name: 's0', kind: 'run', output: '[0]' },
      { index: 1, name: 's1', kind: 'run' },
      { index: 2, name: 's2', kind: 'run', error },
    ]);
  });

  it('holds the position of an unfinished step before a finished one as pending, and drops unfinished ones at the end', () => {
    const steps = [
      step(0, 'retrying'),
      step(1, 'succeeded'),
      step(2, 'running', { kind: 'wait', eventId: 'e' }),
      step(3, 'succeeded'),
      step(4, 'running'),
      step(5, 'retrying'),
    ];
    expect(toReplayRecords(steps)).toEqual([
      { index: 0, name: 's0', kind: 'run', pending: true },
      { index: 1, name: 's1', kind: 'run', output: '[1]' },
      { index: 2, name: 's2', kind: 'wait', pending: true },
      { index: 3, name: 's3', kind: 'run', output: '[3]' },
    ]);
  });

  it('stops at a position without any step', () => {
    expect(toReplayRecords([step(0, 'succeeded'), step(2, 'succeeded')])).toEqual([
      { index: 0, name: 's0', kind: 'run', output: '[0]' },
    ]);
    expect(toReplayRecords([])).toEqual([]);
  });
});
