import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Dashboard } from '../../tui/App.js';
import { Footer, footerText } from '../../tui/components/Footer.js';
import { RunList } from '../../tui/components/RunList.js';
import { RunView } from '../../tui/components/RunView.js';
import { StatusBar } from '../../tui/components/StatusBar.js';
import { StepView } from '../../tui/components/StepView.js';
import { runRows } from '../../tui/layout.js';
import { RunTable } from '../../tui/run-table.js';
import type { Detail } from '../../tui/state.js';
import { stepViewLines } from '../../tui/step-lines.js';
import { FakeSource, makeAttempt, makeRun, makeStep, runEvent, runId, T0 } from './fixtures.js';

const instances: { unmount: () => void }[] = [];
function mount(tree: ReactElement) {
  const instance = render(tree);
  instances.push(instance);
  return instance;
}
afterEach(() => {
  for (const instance of instances.splice(0)) instance.unmount();
});

/** Lines of the last frame (ink-testing-library writes no colour: its stdout is not a terminal). */
const frameOf = (instance: { lastFrame: () => string | undefined }): string => instance.lastFrame() ?? '';

describe('RunList', () => {
  const runs = [
    makeRun(3, { status: 'running', finishedAt: null, stepsDone: 1 }),
    makeRun(2, { status: 'failed' }),
    makeRun(1),
  ];

  it('shows glyph, status, id, workflow, start, duration and steps done; the selected row is marked', () => {
    const frame = frameOf(
      mount(
        <RunList runs={runs} selected={1} width={100} height={10} now={T0 + 4500} color={false} total={3} filter="" />,
      ),
    );
    const lines = frame.split('\n');
    expect(lines[0]).toMatch(/STATUS\s+RUN\s+WORKFLOW\s+STARTED\s+DURATION\s+STEPS/);
    expect(lines[1]).toMatch(
      new RegExp(`^  ▶ running\\s+${runId(3)} /api/workflow-0\\s+\\d\\d:\\d\\d:\\d\\d\\s+1\\.50s…\\s+1$`),
    );
    expect(lines[2]).toMatch(new RegExp(`^› ✗ failed\\s+${runId(2)}`));
    expect(lines[3]).toMatch(/✓ completed .* 50ms\s+2$/);
  });

  it('fits a narrow terminal: no status word or start time, the workflow path shortened', () => {
    const frame = frameOf(
      mount(<RunList runs={runs} selected={0} width={60} height={5} now={T0} color={false} total={3} filter="" />),
    );
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    expect(frame).toContain(`› ▶ ${runId(3)} …orkflow-0`);
    expect(frame).not.toContain('STARTED');
  });

  it("shows an outage or a failureFunction call still owed in the workflow's column; the run view has all of it", () => {
    const down = makeRun(4, { status: 'running', finishedAt: null, unreachableSince: T0 + 5000, nextAt: T0 + 9000 });
    const owed = makeRun(5, {
      status: 'failed',
      failureCall: 'pending',
      failureCallAttempts: 2,
      unreachableSince: null,
      nextAt: T0 + 7000,
    });
    const wide = frameOf(
      mount(
        <RunList
          runs={[owed, down]}
          selected={-1}
          width={100}
          height={5}
          now={T0 + 6000}
          color={false}
          total={2}
          filter=""
        />,
      ),
    );
    // The test terminal is 100 columns: the workflow column holds the start of the note (the run view has all of it).
    expect(wide).toContain(`${runId(4)} app unreachable since 03:04`);
    expect(wide).toContain(`${runId(5)} failureFunction pending (2 …`);
    const view = frameOf(
      mount(
        <RunView
          run={down}
          detail={{ runId: down.id, steps: [], attempts: [], loading: false, error: null } as unknown as Detail}
          cursor={0}
          top={0}
          width={100}
          height={10}
          now={T0 + 6000}
          color={false}
        />,
      ),
    );
    expect(view.split('\n')[3]).toBe('app unreachable since 03:04:10, next try at 03:04:14');
    const narrow = frameOf(
      mount(
        <RunList runs={[down]} selected={-1} width={66} height={3} now={T0 + 6000} color={false} total={1} filter="" />,
      ),
    );
    expect(narrow).toContain(`${runId(4)} app unreachable…`);
  });

  it("shows a failed run's alert: pending (with its next try) in the list and run view, delivered in the run view", () => {
    const pending = makeRun(7, { status: 'failed', alert: 'pending', alertAttempts: 3, nextAt: T0 + 7000 });
    const list = frameOf(
      mount(
        <RunList
          runs={[pending]}
          selected={-1}
          width={140}
          height={3}
          now={T0 + 6000}
          color={false}
          total={1}
          filter=""
        />,
      ),
    );
    expect(list).toContain(`${runId(7)} alert pending (3 attempts, next try at 03:04`);
    const delivered = makeRun(8, {
      status: 'failed',
      error: { name: 'Error', message: 'boom' },
      alert: 'delivered',
      alertAttempts: 2,
      attempts: 3,
    });
    const detail = { runId: delivered.id, steps: [], attempts: [], loading: false, error: null } as unknown as Detail;
    const view = frameOf(
      mount(
        <RunView run={delivered} detail={detail} cursor={0} top={0} width={120} height={20} now={T0} color={false} />,
      ),
    );
    expect(view).toContain('alert delivered (2 attempts) · error  Error: boom');
    // A delivered alert is not worth a line in the list (as a delivered failureFunction call).
    const quiet = frameOf(
      mount(
        <RunList runs={[delivered]} selected={-1} width={140} height={3} now={T0} color={false} total={1} filter="" />,
      ),
    );
    expect(quiet).not.toContain('alert');
  });

  it('says why a run waits on flow control, in the list and in the run view', () => {
    const waiting = makeRun(6, {
      status: 'queued',
      finishedAt: null,
      flowKey: 'tenant-42',
      queuedReason: 'flow control `tenant-42`: 5 of 5 running',
    });
    const list = frameOf(
      mount(
        <RunList runs={[waiting]} selected={-1} width={120} height={3} now={T0} color={false} total={1} filter="" />,
      ),
    );
    expect(list).toContain(`${runId(6)} waiting: flow control \`tenant-42\``);
    const view = frameOf(
      mount(
        <RunView
          run={waiting}
          detail={{ runId: waiting.id, steps: [], attempts: [], loading: false, error: null } as unknown as Detail}
          cursor={0}
          top={0}
          width={100}
          height={10}
          now={T0}
          color={false}
        />,
      ),
    );
    expect(view).toContain('waiting: flow control `tenant-42`: 5 of 5 running');
  });

  it('says how to start a run when there is none, and what to do when the filter hides all', () => {
    expect(
      frameOf(
        mount(<RunList runs={[]} selected={-1} width={100} height={5} now={T0} color={false} total={0} filter="" />),
      ),
    ).toContain('No runs yet');
    expect(
      frameOf(
        mount(<RunList runs={[]} selected={-1} width={100} height={5} now={T0} color={false} total={4} filter="zzz" />),
      ),
    ).toContain('No runs match "zzz"');
  });
});

describe('Upstash-protocol runs', () => {
  const upstash = makeRun(7, { protocol: 'upstash', status: 'failed' });

  it('are tagged in the run list, before the workflow', () => {
    const frame = frameOf(
      mount(
        <RunList
          runs={[upstash, makeRun(1)]}
          selected={0}
          width={120}
          height={10}
          now={T0 + 9000}
          color={false}
          total={2}
          filter=""
        />,
      ),
    );
    const [, tagged, native] = frame.split('\n');
    expect(tagged).toContain('[Upstash] localhost:3000/api/workflow-1');
    expect(native).not.toContain('[Upstash]');
  });

  it('are tagged in the run view header', () => {
    const detail: Detail = { runId: upstash.id, loading: false, error: null, steps: [], attempts: [], logs: [] };
    const frame = frameOf(
      mount(
        <RunView
          run={upstash}
          detail={detail}
          cursor={0}
          top={0}
          width={120}
          height={10}
          now={T0 + 9000}
          color={false}
        />,
      ),
    );
    expect(frame.split('\n')[0]).toContain(`${upstash.id}  [Upstash]`);
  });
});

describe('RunView', () => {
  const run = makeRun(1, { status: 'failed', error: { name: 'Error', message: 'boom' }, stepsDone: 4, attempts: 3 });
  const steps = [
    makeStep(1, 0),
    makeStep(1, 1, { name: 'email', group: 2 }),
    makeStep(1, 2, { name: 'sms', group: 2 }),
    makeStep(1, 3, { name: 'nap', kind: 'sleep', until: T0 + 60_000, outputEncoded: null }),
    makeStep(1, 4, {
      name: 'approval',
      kind: 'wait',
      eventId: 'order-42',
      status: 'succeeded',
      outputEncoded: '[{"eventData":1,"timeout":2},null,false]',
    }),
    makeStep(1, 5, {
      name: 'fetch',
      kind: 'call',
      request: { method: 'POST', url: 'https://api.test/x', headers: {} },
      outputEncoded: '[{"status":1,"headers":2,"body":3},201,{},"ok"]',
    }),
    makeStep(1, 6, {
      name: 'explode',
      status: 'failed',
      reportedExecutions: 3,
      failures: 3,
      error: { name: 'Error', message: 'db down' },
    }),
  ];
  const detail: Detail = { runId: run.id, loading: false, error: null, steps, attempts: [], logs: [] };

  it('lists the steps in order with status, attempts and duration; parallel steps bracketed; kinds explained', () => {
    const frame = frameOf(
      mount(<RunView run={run} detail={detail} cursor={5} top={0} width={100} height={20} now={T0} color={false} />),
    );
    expect(frame).toContain(`✗ failed  ${run.id}  localhost:3000/api/workflow-1`);
    expect(frame).toContain('error  Error: boom');
    expect(frame).toMatch(/┌\s+1 email\s+run\s+✓ succeeded/);
    expect(frame).toMatch(/└\s+2 sms/);
    expect(frame).toMatch(/3 nap\s+sleep\s+✓ succeeded .* wakes \d\d:\d\d:\d\d/);
    expect(frame).toMatch(/4 approval\s+wait .* event order-42/);
    expect(frame).toMatch(/› \s+5 fetch\s+call .* POST https:\/\/api\.test\/x → 201/);
    expect(frame).toMatch(/6 explode\s+run\s+✗ failed\s+3 \(3✗\) .* db down/);
  });

  it('draws only the step rows that fit', () => {
    const many: Detail = { ...detail, steps: Array.from({ length: 50 }, (_, i) => makeStep(1, i, { name: `s${i}` })) };
    const frame = frameOf(
      mount(<RunView run={run} detail={many} cursor={20} top={15} width={100} height={12} now={T0} color={false} />),
    );
    const rows = frame.split('\n').filter((line) => / s\d+ /.test(line));
    expect(rows).toHaveLength(12 - 5);
    expect(rows[0]).toContain(' s15 ');
    expect(frame).toMatch(/› \s+20 s20/);
  });

  it('says it is loading, or why it could not load', () => {
    expect(
      frameOf(
        mount(
          <RunView
            run={run}
            detail={{ ...detail, steps: [], loading: true }}
            cursor={0}
            top={0}
            width={100}
            height={10}
            now={T0}
            color={false}
          />,
        ),
      ),
    ).toContain('loading steps');
    expect(
      frameOf(
        mount(
          <RunView
            run={run}
            detail={{ ...detail, steps: [], error: 'gone' }}
            cursor={0}
            top={0}
            width={100}
            height={10}
            now={T0}
            color={false}
          />,
        ),
      ),
    ).toContain('✗ gone');
  });
});

describe('RunView timeline column', () => {
  // A 1 s run on a 16-cell axis (120 columns): 62.5 ms a cell.
  const run = makeRun(1, { createdAt: T0, finishedAt: T0 + 1000, updatedAt: T0 + 1000 });
  const steps = [
    makeStep(1, 0, { name: 'reserve', startedAt: T0, finishedAt: T0 + 100, durationMs: 100 }),
    makeStep(1, 1, {
      name: 'charge',
      startedAt: T0 + 500,
      finishedAt: T0 + 600,
      durationMs: 100,
      reportedExecutions: 2,
      failures: 1,
    }),
    makeStep(1, 2, { name: 'nap', kind: 'sleep', startedAt: T0 + 600, finishedAt: T0 + 1000, until: T0 + 1000 }),
  ];
  // The first execution of `charge` failed after 50 ms, at the end of drive 1 (T0+100 … T0+200).
  const failedDrive = makeAttempt(1, 1, {
    startedAt: T0 + 100,
    durationMs: 100,
    outcome: 'failed',
    responseBody:
      '{"t":"failed","error":{"name":"Error","message":"card declined"},"retryable":true,"step":{"index":1,"name":"charge","kind":"run","durationMs":50}}\n',
  });
  const detail: Detail = { runId: run.id, loading: false, error: null, steps, attempts: [failedDrive], logs: [] };

  it("draws a bar per step on the run's time axis: executions, the failure, the wait to retry, the sleep", () => {
    const frame = frameOf(
      mount(
        <RunView run={run} detail={detail} cursor={0} top={0} width={120} height={12} now={T0 + 5000} color={false} />,
      ),
    );
    const lines = frame.split('\n');
    expect(lines[4]).toMatch(/DURATION {2}TIMELINE {10}DETAIL$/);
    // The queue delay: creation to the first drive (T0 → T0+100).
    expect(lines[1]).toMatch(/^started \d\d:\d\d:\d\d · queued 100ms · took 1\.00s · /);
    const bar = (name: string): string => {
      const line = lines.find((l) => new RegExp(`\\d ${name} `).test(l)) ?? '';
      // Ink trims a line's trailing spaces (these steps have no detail).
      return line.slice(lines[4]!.indexOf('TIMELINE'), lines[4]!.indexOf('TIMELINE') + 16).padEnd(16);
    };
    expect(bar('reserve')).toBe('██              ');
    expect(bar('charge')).toBe('  █✗╌╌╌╌██      ');
    expect(bar('nap')).toBe('         ░░░░░░░');
  });

  it('leaves the bar out below 110 columns, where the detail needs the room', () => {
    const frame = frameOf(
      mount(
        <RunView run={run} detail={detail} cursor={0} top={0} width={100} height={12} now={T0 + 5000} color={false} />,
      ),
    );
    expect(frame).not.toContain('TIMELINE');
    expect(frame).not.toContain('╌');
    // Attempts not loaded yet: the queue delay is unknown, so it is left out rather than guessed.
    const loading = frameOf(
      mount(
        <RunView
          run={{ ...run, attempts: 2 }}
          detail={{ ...detail, attempts: [] }}
          cursor={0}
          top={0}
          width={100}
          height={12}
          now={T0 + 5000}
          color={false}
        />,
      ),
    );
    expect(loading).not.toContain('queued');
  });
});

describe('StepView', () => {
  const step = makeStep(1, 1, {
    name: 'charge',
    status: 'failed',
    failures: 1,
    error: { name: 'Error', message: 'card declined', stack: 'Error: card declined\n    at charge (app.ts:3:9)' },
    outputEncoded: null,
  });
  const attempts = [
    makeAttempt(1, 1),
    makeAttempt(1, 2, {
      outcome: 'failed',
      requestBody: '{"v":1,"steps":[{"index":0}]}',
      responseBody:
        '{"t":"started","index":1,"name":"charge","kind":"run","group":2}\n{"t":"failed","error":{"name":"Error","message":"card declined"},"retryable":true,"step":{"index":1,"name":"charge","kind":"run","durationMs":3}}\n',
      error: { name: 'Error', message: 'card declined', stack: 'Error: card declined\n    at charge (app.ts:3:9)' },
    }),
  ];

  it("shows the error with its stack, and the attempts: this step's expanded with headers, bodies and its own lines marked", () => {
    const lines = stepViewLines(step, attempts, 100);
    const frame = frameOf(
      mount(<StepView step={step} lines={lines} scroll={0} width={100} height={80} color={false} />),
    );
    expect(frame).toMatch(/^step 1 charge {2}✗ failed · run · 1\.5ms · 1 failed/);
    expect(frame).toContain('Error: card declined');
    expect(frame).toContain('at charge (app.ts:3:9)');
    expect(frame).toContain('Attempts · 1 of 2 drive requests concern this step');
    expect(frame).toMatch(/^ {2}attempt 1 · .* HTTP 200 · done$/m);
    expect(frame).toMatch(/^◆ attempt 2 · .* HTTP 200 · failed: card declined$/m);
    expect(frame).toContain('wf-signature: [redacted]');
    expect(frame).toContain('"steps": [');
    expect(frame).toMatch(/^ {4}▶ \{"t":"started","index":1/m);
    expect(frame).toMatch(/^ {4}▶ \{"t":"failed"/m);
  });

  it('an Upstash-protocol step: the deliveries that ran it (the one that produced it and its failed try), none for another step', () => {
    const upstash = { protocol: 'upstash' as const };
    const delivery = (seq: number, messageId: string, status: number) =>
      makeAttempt(1, seq, {
        requestHeaders: { 'upstash-message-id': messageId },
        requestBody: '[]',
        responseStatus: status,
        responseBody: '{"workflowRunId":"wfr_x"}',
        outcome: status === 200 ? 'done' : 'retry',
      });
    const deliveries = [delivery(1, 'msg_a', 200), delivery(2, 'msg_b', 500), delivery(3, 'msg_b', 200)];
    // Produced during delivery 3 (its start = finishedAt - durationMs), the retry of delivery 2's message.
    const produced = makeStep(1, 2, { name: 'b', finishedAt: T0 + 320, durationMs: 20 });
    const frame = frameOf(
      mount(
        <StepView
          step={produced}
          lines={stepViewLines(produced, deliveries, 100, [], upstash)}
          scroll={0}
          width={100}
          height={80}
          color={false}
        />,
      ),
    );
    expect(frame).toContain('Attempts · 2 of 3 deliveries ran this step (◆)');
    expect(frame).toMatch(/^ {2}attempt 1 · /m);
    expect(frame).toMatch(/^◆ attempt 2 · .* HTTP 500/m);
    expect(frame).toMatch(/^◆ attempt 3 · .* HTTP 200/m);
    const sleep = makeStep(1, 3, { kind: 'sleep', finishedAt: T0 + 900, durationMs: 5 });
    const none = frameOf(
      mount(
        <StepView
          step={sleep}
          lines={stepViewLines(sleep, deliveries, 100, [], upstash)}
          scroll={0}
          width={100}
          height={80}
          color={false}
        />,
      ),
    );
    expect(none).toContain('Attempts · 0 of 3 deliveries ran this step');
    expect(none).toContain('No delivery ran this step');
  });

  it('scrolls: draws only the lines that fit, from `scroll`, and says where it is', () => {
    const lines = stepViewLines(step, attempts, 60);
    const frame = frameOf(mount(<StepView step={step} lines={lines} scroll={5} width={60} height={8} color={false} />));
    const drawn = frame.split('\n');
    expect(drawn).toHaveLength(8);
    expect(drawn[0]).toContain(`lines 6–12 of ${lines.length}`);
    expect(drawn[1]).toBe(lines[5]!.text);
    for (const line of drawn) expect(line.length).toBeLessThanOrEqual(60);
  });

  it('shows what the step printed, attempt by attempt (the failed one too), with levels, fields and the truncation note', () => {
    const logs = [
      {
        runId: step.runId,
        index: 1,
        name: 'charge',
        attempt: 2,
        status: 'failed' as const,
        at: T0,
        dropped: 0,
        lines: [
          { at: new Date(2026, 0, 2, 3, 4, 5, 6).getTime(), level: 'log' as const, message: 'charging' },
          { at: T0, level: 'error' as const, message: 'declined', fields: { code: 'card_declined' } },
        ],
      },
      {
        runId: step.runId,
        index: 1,
        name: 'charge',
        attempt: 4,
        status: 'succeeded' as const,
        at: T0,
        dropped: 12,
        lines: [{ at: T0, level: 'warn' as const, message: 'slow\nsecond line' }],
      },
      {
        runId: step.runId,
        index: 0,
        name: 'other',
        attempt: 1,
        status: 'succeeded' as const,
        at: T0,
        dropped: 0,
        lines: [{ at: T0, level: 'log' as const, message: 'not this step' }],
      },
    ];
    const lines = stepViewLines(step, attempts, 100, logs);
    const frame = frameOf(
      mount(<StepView step={step} lines={lines} scroll={0} width={100} height={80} color={false} />),
    );
    expect(frame).toContain('Logs · 2 attempts printed');
    expect(frame).toContain('◇ attempt 2 · failed · 2 lines');
    expect(frame).toContain('  03:04:05.006 log   charging');
    expect(frame).toMatch(/^ {2}\d\d:\d\d:\d\d\.\d{3} error declined code="card_declined"$/m);
    expect(frame).toContain('◇ attempt 4 · succeeded · 1 line, 12 more not kept');
    expect(frame).toMatch(/warn {2}slow\n {2}second line$/m);
    expect(frame).toContain('  … 12 more lines not kept (a step keeps 1,000 lines, 64 KiB)');
    expect(frame).not.toContain('not this step');
    // The logs come before the attempts' raw log.
    expect(frame.indexOf('Logs ·')).toBeLessThan(frame.indexOf('Attempts ·'));
    expect(
      frameOf(
        mount(
          <StepView
            step={step}
            lines={stepViewLines(step, attempts, 100, [])}
            scroll={0}
            width={100}
            height={80}
            color={false}
          />,
        ),
      ),
    ).toContain('Logs · printed nothing');
  });

  it('shows a call step its HTTP request and answer', () => {
    const call = makeStep(1, 0, {
      kind: 'call',
      request: { method: 'GET', url: 'https://api.test/y', headers: { accept: 'json' } },
      outputEncoded: '[{"status":1,"headers":2,"body":3},404,{},{"missing":4},true]',
    });
    const frame = frameOf(
      mount(
        <StepView step={call} lines={stepViewLines(call, [], 100)} scroll={0} width={100} height={30} color={false} />,
      ),
    );
    expect(frame).toContain('HTTP call  GET https://api.test/y');
    expect(frame).toContain('accept: json');
    expect(frame).toContain('Answer  404');
    expect(frame).toContain('"missing": true');
  });
});

describe('StatusBar and Footer', () => {
  it('shows the runner, the connection and the runs per status, then the notice or the context', () => {
    const counts = RunTable.empty.with([makeRun(1), makeRun(2, { status: 'failed' })]).counts;
    const bar = (notice: { text: string; error: boolean } | null) =>
      frameOf(
        mount(
          <StatusBar
            title="wf dev"
            source="http://127.0.0.1:7766"
            connection="live"
            total={2}
            counts={counts}
            notice={notice}
            context="apps need WF_TOKEN=T"
            width={120}
            color={false}
          />,
        ),
      );
    expect(bar(null)).toBe(
      'wf dev · http://127.0.0.1:7766 · ● live · 2 runs · ✗ 1 failed · ✓ 1 completed\napps need WF_TOKEN=T',
    );
    expect(bar({ text: 'Cannot cancel x: already completed', error: true }).split('\n')[1]).toBe(
      '✗ Cannot cancel x: already completed',
    );
  });

  it('lists the keys of each view, shorter when narrow; shows the prompt while filtering', () => {
    expect(footerText('runs', 120)).toBe('↑↓/jk move · enter open · / filter · c cancel · r rerun · R resume · q quit');
    expect(footerText('step', 120)).toContain('esc back');
    expect(footerText('run', 50).length).toBeLessThanOrEqual(50);
    expect(frameOf(mount(<Footer view="runs" filtering filter="pay" width={80} />))).toBe(
      '/pay    enter keep · esc clear',
    );
  });

  it('leaves r and R out for an Upstash-protocol run (not restartable)', () => {
    expect(footerText('run', 120, false, false)).toBe(
      '↑↓/jk move · enter step · esc back · / filter · c cancel · q quit',
    );
    expect(
      frameOf(mount(<Footer view="runs" filtering={false} filter="" width={120} restartable={false} />)),
    ).not.toMatch(/\br rerun|R resume/);
  });
});

describe('Dashboard against a data source', () => {
  const size = { columns: 100, rows: 24 };

  it('renders only the rows that fit when 10,000 runs arrive', async () => {
    const source = new FakeSource();
    const started = performance.now();
    const ui = mount(<Dashboard source={source} size={size} events={{ batchMs: 1 }} />);
    await vi.waitFor(() => expect(source.subscribers).toBe(1));
    source.emit(...Array.from({ length: 10_000 }, (_, i) => runEvent(makeRun(i))));
    await vi.waitFor(() => expect(frameOf(ui)).toContain(runId(9999)), { timeout: 5000 });
    console.log(`[tui] 10,000 runs to the first frame showing them: ${(performance.now() - started).toFixed(0)} ms`);
    const frame = frameOf(ui);
    expect(frame).toContain('10000 runs');
    expect(frame.split('\n').filter((line) => line.includes('wfr_'))).toHaveLength(runRows(size));
    expect(frame).not.toContain(runId(9999 - runRows(size)));
  });

  it('navigates run → step → back, filters, and sends cancel and rerun for the selected run', async () => {
    const source = new FakeSource();
    source.runs = [makeRun(1), makeRun(2, { status: 'running', finishedAt: null })];
    source.details.set(runId(1), {
      run: makeRun(1),
      steps: [makeStep(1, 0, { name: 'first' }), makeStep(1, 1, { name: 'second', outputEncoded: '[{"n":1},42]' })],
      attempts: [makeAttempt(1, 1)],
    });
    const ui = mount(<Dashboard source={source} size={size} now={() => T0 + 5000} events={{ batchMs: 1 }} />);
    const see = (text: string | RegExp) => vi.waitFor(() => expect(frameOf(ui)).toMatch(text));
    await see(`› ▶ running    ${runId(2)}`);
    ui.stdin.write('j');
    await see(`› ✓ completed  ${runId(1)}`);
    ui.stdin.write('\r');
    await see(/1 second\s+run\s+✓ succeeded/);
    ui.stdin.write('j');
    await see(/› \s+1 second/);
    ui.stdin.write('\r');
    await see('step 1 second');
    expect(frameOf(ui)).toContain('"n": 42');
    ui.stdin.write('\u001B');
    await see(/› \s+1 second/);
    ui.stdin.write('c');
    await vi.waitFor(() => expect(source.cancelled).toEqual([runId(1)]));
    await see(`✓ cancelled ${runId(1)}`);
    ui.stdin.write('\u001B');
    await see(/STATUS\s+RUN/);
    ui.stdin.write('/');
    await see('enter keep · esc clear');
    ui.stdin.write('running');
    await see('/running ');
    await vi.waitFor(() => expect(frameOf(ui)).not.toContain(`completed  ${runId(1)}`));
    ui.stdin.write('\r');
    ui.stdin.write('r');
    await vi.waitFor(() => expect(source.reruns).toEqual([runId(2)]));
    await see(`rerun of ${runId(2)} started`);
  });

  it('sends resume for the selected run on R (shift-r), and shows it in the status bar', async () => {
    const source = new FakeSource();
    source.runs = [makeRun(1, { status: 'failed' })];
    const ui = mount(<Dashboard source={source} size={size} now={() => T0 + 5000} events={{ batchMs: 1 }} />);
    const see = (text: string | RegExp) => vi.waitFor(() => expect(frameOf(ui)).toMatch(text));
    await see(`${runId(1)}`);
    ui.stdin.write('R');
    await vi.waitFor(() => expect(source.resumed).toEqual([runId(1)]));
    expect(source.reruns).toEqual([]);
    await see(`resumed ${runId(1)} from its failed step`);
  });
});

describe('child workflows (context.invoke)', () => {
  it("the run view shows a child's parent and an invoke step's child run; the step view names the child", () => {
    const parent = runId(1);
    const child = runId(2);
    const run = makeRun(2, { idempotencyKey: `invoke:${parent}:0`, parentRunId: parent, parentStepIndex: 0 });
    const step = makeStep(2, 0, {
      kind: 'invoke',
      name: 'resize',
      eventId: `wf-child:${runId(3)}`,
      childRunId: runId(3),
      request: { url: 'http://127.0.0.1:3000/resize', method: 'POST', headers: {}, body: '{}' },
    });
    const detail: Detail = { runId: run.id, loading: false, error: null, steps: [step], attempts: [], logs: [] };
    // 100 columns, the test frame's own width: no timeline column, so the detail column starts within it.
    const frame = frameOf(
      mount(<RunView run={run} detail={detail} cursor={0} top={0} width={100} height={10} now={T0} color={false} />),
    );
    expect(frame).toContain(`${child}`);
    expect(frame).toContain(`child of ${parent} step 0`);
    expect(frame).toMatch(/resize\s+invoke ✓ succeeded.*child wfr_0/);
    const lines = stepViewLines(step, [], 120).map((l) => l.text);
    expect(lines).toContain(`Child run  ${runId(3)} · POST http://127.0.0.1:3000/resize`);
  });
});
