import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { slimEvent } from '../../api/events.js';
import { Dashboard } from '../../tui/App.js';
import { FakeSource, makeAttempt, makeRun, makeStep, runId } from './fixtures.js';

/**
 * Slim events (GET /v1/events without `bodies`) leave outputs and bodies out: the dashboard
 * keeps what it holds and reads the open run again, once per burst, to show the new ones.
 */

const RUN = runId(2);
const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

/** A source that counts the runs it was asked for. */
class CountingSource extends FakeSource {
  reads: string[] = [];
  override async getRun(id: string) {
    this.reads.push(id);
    return super.getRun(id);
  }
}

describe('Dashboard on slim events', () => {
  it('reads the open run again once for a burst of its slim events, and shows the new output', async () => {
    const source = new CountingSource();
    const running = makeRun(2, { status: 'running', finishedAt: null });
    source.runs = [running, makeRun(1)];
    source.details.set(RUN, {
      run: running,
      steps: [makeStep(2, 0, { name: 'first', outputEncoded: '[1]' })],
      attempts: [makeAttempt(2, 1)],
    });
    const ui = render(<Dashboard source={source} size={{ columns: 100, rows: 24 }} events={{ batchMs: 1 }} />);
    unmounts.push(() => ui.unmount());
    const frame = (): string => ui.lastFrame() ?? '';
    await vi.waitFor(() => expect(frame()).toContain(RUN));
    ui.stdin.write('\r'); // the newest run, the running one, opens
    await vi.waitFor(() => expect(frame()).toMatch(/0 first\s+run\s+✓ succeeded/));
    await vi.waitFor(() => expect(source.reads).toEqual([RUN]));

    // The run goes on: a second step with an output only a read of the run can bring.
    const second = makeStep(2, 1, { name: 'second', outputEncoded: '[{"answer":4242}]' });
    source.details.set(RUN, {
      ...source.details.get(RUN)!,
      steps: [makeStep(2, 0, { name: 'first', outputEncoded: '[1]' }), second],
    });
    const burst = Array.from({ length: 20 }, () => slimEvent({ type: 'step', step: second }));
    source.emit(...burst);
    // Another run's slim events cost nothing.
    source.emit(slimEvent({ type: 'run', run: makeRun(1) }));
    await vi.waitFor(() => expect(frame()).toMatch(/1 second\s+run\s+✓ succeeded/));
    await vi.waitFor(() => expect(source.reads).toEqual([RUN, RUN]));
    ui.stdin.write('j');
    ui.stdin.write('\r');
    await vi.waitFor(() => expect(frame()).toContain('4242'));
    // Still one read for the whole burst.
    expect(source.reads).toEqual([RUN, RUN]);
  });
});
