import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Dashboard } from '../../tui/App.js';
import { footerText } from '../../tui/components/Footer.js';
import { LogPane, plainText } from '../../tui/components/LogPane.js';
import { interpretKey } from '../../tui/hooks/use-keymap.js';
import { bodyRows, logPaneRows, runRows } from '../../tui/layout.js';
import { createLogFeed, type LogEntry } from '../../tui/log-feed.js';
import { bodySize, initialState, LOG_LINES, reducer, type Action, type DashboardState } from '../../tui/state.js';
import { FakeSource, makeRun, T0 } from './fixtures.js';

/** The log pane of `wf dev`'s dashboard: the app's output and what wf dev found, as reducer actions. */

const SIZE = { columns: 100, rows: 30 };
const apply = (state: DashboardState, ...actions: Action[]): DashboardState => actions.reduce(reducer, state);
const app = (text: string, stream: 'stdout' | 'stderr' = 'stdout'): LogEntry => ({ source: 'app', text, stream });
const lines = (n: number, from = 0): LogEntry[] => Array.from({ length: n }, (_, i) => app(`line ${from + i}`));

describe('log pane state', () => {
  it('is there only when the dashboard has a log, and then starts open', () => {
    expect(initialState(SIZE, T0).log).toEqual({ enabled: false, open: false, lines: [], total: 0 });
    expect(initialState(SIZE, T0, true).log).toEqual({ enabled: true, open: true, lines: [], total: 0 });
  });

  it('appends lines in order and keeps only the newest LOG_LINES, counting all', () => {
    let state = initialState(SIZE, T0, true);
    state = apply(state, { type: 'log', entries: lines(3) }, { type: 'log', entries: lines(2, 3) });
    expect(state.log.lines.map((l) => l.text)).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);
    state = apply(state, { type: 'log', entries: lines(LOG_LINES, 5) });
    expect(state.log.lines).toHaveLength(LOG_LINES);
    expect(state.log.total).toBe(LOG_LINES + 5);
    expect(state.log.lines[0]!.text).toBe('line 5');
    expect(state.log.lines.at(-1)!.text).toBe(`line ${LOG_LINES + 4}`);
  });

  it('is pure: the previous state and its lines are left as they were', () => {
    const before = apply(initialState(SIZE, T0, true), { type: 'log', entries: lines(2) });
    const frozen = JSON.stringify(before.log);
    apply(before, { type: 'log', entries: lines(LOG_LINES) }, { type: 'log-toggle' });
    expect(JSON.stringify(before.log)).toBe(frozen);
    expect(apply(before, { type: 'log', entries: [] })).toBe(before);
  });

  it("what wf dev says becomes the notice (an error for warnings and errors); the app's lines do not", () => {
    let state = apply(initialState(SIZE, T0, true), { type: 'log', entries: [app('compiled')] });
    expect(state.notice).toBeNull();
    state = apply(state, {
      type: 'log',
      entries: [{ source: 'wf', text: 'app ok: http://localhost:3000/workflow' }, app('GET /')],
    });
    expect(state.notice).toEqual({ text: 'app ok: http://localhost:3000/workflow', error: false, at: T0 });
    state = apply(state, {
      type: 'log',
      entries: [{ source: 'wf', text: 'nothing listens on port 3000', level: 'error' }],
    });
    expect(state.notice).toMatchObject({ text: 'nothing listens on port 3000', error: true });
  });

  it('l toggles the pane when there is a log, and does nothing without one', () => {
    const withLog = initialState(SIZE, T0, true);
    expect(interpretKey(withLog, 'l', {})).toEqual({ type: 'log-toggle' });
    expect(apply(withLog, { type: 'log-toggle' }).log.open).toBe(false);
    expect(apply(withLog, { type: 'log-toggle' }, { type: 'log-toggle' }).log.open).toBe(true);
    const without = initialState(SIZE, T0);
    expect(interpretKey(without, 'l', {})).toBeUndefined();
    expect(apply(without, { type: 'log-toggle' })).toBe(without);
  });

  it('the open pane takes rows from the views, and the cursor stays on screen when it opens', () => {
    const closed = apply(initialState(SIZE, T0, true), { type: 'log-toggle' });
    expect(bodySize(closed)).toEqual(SIZE);
    const runs = Array.from({ length: 60 }, (_, i) => makeRun(i + 1));
    let state = apply(closed, { type: 'runs-loaded', runs }, { type: 'key', key: 'end' }, { type: 'key', key: 'home' });
    for (let i = 0; i < runRows(SIZE) - 1; i++) state = reducer(state, { type: 'key', key: 'down' });
    expect(state.cursor).toBe(runRows(SIZE) - 1);
    expect(state.top).toBe(0);
    state = reducer(state, { type: 'log-toggle' });
    const rows = runRows(bodySize(state));
    expect(bodySize(state).rows).toBe(SIZE.rows - logPaneRows(SIZE));
    expect(state.cursor - state.top).toBeLessThan(rows);
    expect(state.top).toBeGreaterThan(0);
  });

  it('the pane is a third of the body, at least 4 and at most 13 rows, and always leaves the views some', () => {
    expect(logPaneRows({ columns: 80, rows: 30 })).toBe(9);
    expect(logPaneRows({ columns: 80, rows: 12 })).toBe(4);
    expect(logPaneRows({ columns: 80, rows: 100 })).toBe(13);
    for (const rows of [3, 5, 6, 8, 10]) {
      const body = bodyRows({ columns: 80, rows });
      expect(body - logPaneRows({ columns: 80, rows })).toBeGreaterThanOrEqual(Math.min(3, body));
    }
  });
});

describe('createLogFeed', () => {
  it('gives a late subscriber the backlog (capped), then each new line', () => {
    const feed = createLogFeed('npm run dev', 3);
    for (const entry of lines(5)) feed.push(entry);
    const seen: string[][] = [];
    const stop = feed.subscribe((entries) => seen.push(entries.map((e) => e.text)));
    feed.push(app('ready'));
    stop();
    feed.push(app('after'));
    expect(seen).toEqual([['line 2', 'line 3', 'line 4'], ['ready']]);
  });
});

const instances: { unmount: () => void }[] = [];
afterEach(() => {
  for (const instance of instances.splice(0)) instance.unmount();
});
const frameOf = (instance: { lastFrame: () => string | undefined }): string => instance.lastFrame() ?? '';

describe('LogPane', () => {
  it('draws a title rule and the newest lines that fit, wf dev lines marked, escapes removed, cut to width', () => {
    const entries: LogEntry[] = [
      ...lines(10),
      app('\u001b[32m✓ Ready\u001b[39m in 1.2s'),
      { source: 'wf', text: 'app ok: http://localhost:3000/api/workflow' },
      app('x'.repeat(200), 'stderr'),
    ];
    const ui = render(<LogPane title="npm run dev" lines={entries} total={13} width={60} height={5} color={false} />);
    instances.push(ui);
    const drawn = frameOf(ui).split('\n');
    expect(drawn).toHaveLength(5);
    expect(drawn[0]).toMatch(/^─ log · npm run dev · 13 lines · l hides ─+$/);
    expect(drawn[0]).toHaveLength(60);
    expect(drawn.slice(1, 4)).toEqual(['line 9', '✓ Ready in 1.2s', 'wf: app ok: http://localhost:3000/api/workflow']);
    expect(drawn[4]).toBe('x'.repeat(59) + '…');
  });

  it('says when there is no output yet', () => {
    const ui = render(<LogPane title="npm run dev" lines={[]} total={0} width={60} height={4} color={false} />);
    instances.push(ui);
    expect(frameOf(ui)).toContain('─ log · npm run dev · no output yet');
  });

  it('plainText removes colour and cursor escapes and control characters, and keeps the text', () => {
    expect(plainText('\u001b[1m\u001b[36mVITE\u001b[39m\u001b[22m ready\u0007 \u001b]8;;http://x\u0007link')).toBe(
      'VITE ready link',
    );
  });
});

describe('Dashboard with a log feed', () => {
  it('shows the feed in the pane with `l logs` in the footer; l hides it and gives the rows back to the run list', async () => {
    const source = new FakeSource();
    source.runs = Array.from({ length: 40 }, (_, i) => makeRun(i + 1));
    const feed = createLogFeed('node app.mjs');
    feed.push({ source: 'wf', text: 'starting the app: node app.mjs' });
    feed.push(app('app listening on http://127.0.0.1:3000/workflow'));
    const ui = render(
      <Dashboard source={source} size={SIZE} now={() => T0 + 5000} events={{ batchMs: 1 }} log={feed} />,
    );
    instances.push(ui);
    const see = (text: string | RegExp) => vi.waitFor(() => expect(frameOf(ui)).toMatch(text));
    await see('─ log · node app.mjs · 2 lines');
    await see('app listening on http://127.0.0.1:3000/workflow');
    expect(frameOf(ui).trimEnd().split('\n').at(-1)).toBe(footerText('runs', SIZE.columns, true));
    expect(footerText('runs', SIZE.columns, true)).toContain('l logs · q quit');
    await see(/STATUS\s+RUN/);
    const withPane = frameOf(ui)
      .split('\n')
      .filter((line) => line.includes('wfr_')).length;
    expect(withPane).toBe(runRows(bodySize(apply(initialState(SIZE, T0, true)))));
    feed.push({ source: 'wf', text: 'app ok: http://127.0.0.1:3000/workflow' });
    await see('✓ app ok: http://127.0.0.1:3000/workflow');
    ui.stdin.write('l');
    await vi.waitFor(() => expect(frameOf(ui)).not.toContain('─ log ·'));
    expect(
      frameOf(ui)
        .split('\n')
        .filter((line) => line.includes('wfr_')),
    ).toHaveLength(runRows(SIZE));
    ui.stdin.write('l');
    await see('─ log · node app.mjs · 3 lines');
  });

  it('without a feed there is no pane and no `l` hint', async () => {
    const source = new FakeSource();
    const ui = render(<Dashboard source={source} size={SIZE} events={{ batchMs: 1 }} />);
    instances.push(ui);
    await vi.waitFor(() => expect(frameOf(ui)).toContain('No runs yet'));
    expect(frameOf(ui)).not.toContain('─ log ·');
    expect(frameOf(ui)).not.toContain('l logs');
  });
});
