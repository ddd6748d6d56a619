import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { RunList } from '../../tui/components/RunList.js';
import { RunView } from '../../tui/components/RunView.js';
import { StepView } from '../../tui/components/StepView.js';
import type { Detail } from '../../tui/state.js';
import { stepViewLines } from '../../tui/step-lines.js';
import { hasRawControl, HOSTILE } from '../helpers/hostile-text.js';
import { makeAttempt, makeRun, makeStep, T0 } from './fixtures.js';

/**
 * Finding 4 of issue 19, in the terminal dashboard: what workflow code wrote (step names, logs
 * and their field keys, outputs, errors, attempt headers and bodies, run URLs) reaches the frame
 * as visible escapes, never as characters the terminal would obey.
 */

const instances: { unmount: () => void }[] = [];
function frameOf(tree: ReactElement): string {
  const instance = render(tree);
  instances.push(instance);
  return instance.lastFrame() ?? '';
}
afterEach(() => {
  for (const instance of instances.splice(0)) instance.unmount();
});

const all = HOSTILE.map(({ text }) => text).join(' | ');

function expectSafe(frame: string): void {
  for (const line of frame.split('\n')) expect(hasRawControl(line), JSON.stringify(line)).toBe(false);
}

describe('the dashboard draws hostile run data as visible escapes', () => {
  it('in the step view: name, logs, field keys, output, error, headers and bodies', () => {
    const step = makeStep(1, 0, {
      name: `evil${HOSTILE[0]!.text}`,
      status: 'failed',
      output: JSON.stringify(all),
      error: { name: 'Error', message: `bad ${all}`, stack: `Error: bad ${all}\n    at x` },
    });
    const attempts = [
      makeAttempt(1, 1, {
        requestHeaders: { 'x-evil': all },
        requestBody: `{"a":${JSON.stringify(all)}}`,
        responseBody: all,
        error: { name: 'Error', message: all },
      }),
    ];
    const logs = [
      {
        runId: step.runId,
        index: 0,
        name: step.name,
        attempt: 1,
        status: 'failed' as const,
        at: T0,
        dropped: 0,
        lines: HOSTILE.map(({ text }, i) => ({
          at: T0,
          level: 'log' as const,
          message: `line ${text}`,
          fields: { [`key${i}${text}`]: text },
        })),
      },
    ];
    const lines = stepViewLines(step, attempts, 100, logs);
    for (const line of lines) expect(hasRawControl(line.text), JSON.stringify(line.text)).toBe(false);
    const frame = frameOf(<StepView step={step} lines={lines} scroll={0} width={100} height={400} color={false} />);
    expectSafe(frame);
    expect(frame).toContain('step 0 evil\\x1b]52;c;');
    for (const { name, shown } of HOSTILE.filter((h) => h.shown.length < 60))
      expect(frame, name).toContain(`line ${shown}`);
    expect(frame).toContain('key0\\x1b]52;c;ZWNobyBwd25lZA==\\a=');
  });

  it('in the run list and the run view: URL, error and step rows', () => {
    const run = makeRun(2, {
      status: 'failed',
      url: `http://localhost:3000/a${HOSTILE[1]!.text}`,
      error: { name: 'Error', message: all },
    });
    const steps = [
      makeStep(2, 0, { name: `s${HOSTILE[2]!.text}`, status: 'failed', error: { name: 'Error', message: all } }),
    ];
    const list = frameOf(
      <RunList runs={[run]} selected={0} width={140} height={5} now={T0} color={false} total={1} filter="" />,
    );
    expectSafe(list);
    const view = frameOf(
      <RunView
        run={run}
        detail={{ runId: run.id, steps, attempts: [], loading: false, error: null } as unknown as Detail}
        cursor={0}
        top={0}
        width={140}
        height={12}
        now={T0}
        color={false}
      />,
    );
    expectSafe(view);
    expect(view).toContain('localhost:3000/a\\x1b[2J');
  });
});
