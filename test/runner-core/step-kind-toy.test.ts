import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseRunDetail } from '../../api/parse.js';
import { eventLine } from '../../cli/lib/format.js';
import { decodeOutcome } from '../../protocol/outcome.js';
import { registerWireKind } from '../../protocol/step-kinds/index.js';
import { decodeValue } from '../../protocol/values.js';
import { registerRunnerKind } from '../../runner-core/step-kinds/index.js';
import { succeeded } from '../../runner-core/step-kinds/resolved.js';
import type { WorkflowContext } from '../../serve/core/context.js';
import { registerRouteKind } from '../../serve/core/step-kinds/index.js';
import { stepDetail } from '../../tui/components/RunView.js';
import { registerKindView } from '../../view/step-kinds/index.js';
import { buildTimeline } from '../../view/timeline.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';

/**
 * A step kind is its modules and a line in each table (runner-core/ARCHITECTURE.md, "Adding a step
 * kind"): a toy kind `fixed`, which the runner resolves at once with a fixed value, registered in
 * the four tables at run time and run end to end: a route that uses it, a real runner on a SQLite
 * file, real HTTP on 127.0.0.1, the API's record and the frontends' lines.
 */

const FIXED_VALUE = { answer: 42 };

/** The toy's context method, as its route module adds it to every workflow context. */
interface FixedMethods {
  fixed(name: string): Promise<typeof FIXED_VALUE>;
}

beforeAll(() => {
  // Wire: a `fixed` suspension has no fields of its own beyond the base ones.
  registerWireKind('fixed', () => ({}));
  // Route: `context.fixed(name)` claims a position and hands the step to the runner.
  registerRouteKind(
    'fixed',
    (tools): FixedMethods => ({
      fixed: (name) => tools.suspend('fixed' as never, name, () => ({}) as never) as Promise<typeof FIXED_VALUE>,
    }),
  );
  // Runner: nothing to store, always described, resolved at once with the fixed value.
  registerRunnerKind('fixed', {
    stored: () => ({ until: null, eventId: null, request: null }),
    described: () => true,
    resolve: async (ctx, _run, steps) => steps.map((step) => succeeded(step, FIXED_VALUE, ctx.now())),
    endedMeanwhile: async () => false,
    dto: () => ({}),
  });
  // View: drawn as a runner-held span, with its own detail in every frontend.
  registerKindView('fixed', {
    span: 'calling',
    until: null,
    printsLogs: false,
    outputLabel: () => 'Fixed value',
    line: () => ' · answered by the runner',
    row: () => 'answered by the runner',
    section: () => ({ label: 'Fixed  answered by the runner' }),
    summary: () => 'answered by the runner',
  });
});

afterAll(closeStarted);

it('fails the run, naming the kind, when the route suspends a kind the runner has no module for', async () => {
  // Registered on the wire and the route only: the runner must not leave it pending forever.
  registerWireKind('orphan', () => ({}));
  registerRouteKind('orphan', (tools) => ({
    orphan: (name: string) => tools.suspend('orphan' as never, name, () => ({}) as never),
  }));
  const runner = await startTestRunner();
  const app = await startApp(
    async (context: WorkflowContext) => {
      await (context as WorkflowContext & { orphan(name: string): Promise<unknown> }).orphan('lost');
      return 'unreachable';
    },
    { token: runner.token, runnerUrl: runner.url },
  );
  const { run } = await waitForFinish(runner.runner, await startThroughApp(app.url));
  expect(run.status).toBe('failed');
  expect(run.error).toMatchObject({ code: 'UNKNOWN_STEP_KIND', message: expect.stringContaining('"orphan"') });
});

it('runs a route that uses a registered toy kind on a real runner, and shows the step in the API and the views', async () => {
  const runner = await startTestRunner();
  const app = await startApp(
    async (workflowContext: WorkflowContext) => {
      // The built-in kinds' methods are typed on WorkflowContext; a kind registered at run time is not.
      const context = workflowContext as WorkflowContext & FixedMethods;
      const before = await context.run('before', () => 1);
      const fixed = await context.fixed('ask');
      const after = await context.run('after', () => fixed.answer + before);
      return { fixed, after };
    },
    { token: runner.token, runnerUrl: runner.url },
  );

  const runId = await startThroughApp(app.url);
  const { run, steps, attempts } = await waitForFinish(runner.runner, runId);
  expect(run.status).toBe('completed');
  expect(decodeValue(run.output!)).toEqual({ fixed: FIXED_VALUE, after: 43 });
  expect(steps.map((s) => `${s.index}:${s.kind}:${s.name}:${s.status}`)).toEqual([
    '0:run:before:succeeded',
    '1:fixed:ask:succeeded',
    '2:run:after:succeeded',
  ]);
  // The route suspended it on the wire (a `suspend` line naming the toy kind), and the runner resolved it.
  const suspended = attempts
    .flatMap((a) => (a.responseBody ?? '').split('\n').filter(Boolean).map(decodeOutcome))
    .find((o) => o.t === 'suspend');
  expect(suspended).toEqual({
    t: 'suspend',
    steps: [{ kind: 'fixed', index: 1, name: 'ask', group: expect.any(Number) }],
  });

  // The API's record over HTTP, read the way the CLI and dashboards read it.
  const response = await fetch(`${runner.url}/v1/runs/${runId}`);
  expect(response.status).toBe(200);
  const detail = parseRunDetail(await response.json());
  const step = detail.steps[1]!;
  expect(step).toMatchObject({ kind: 'fixed', name: 'ask', status: 'succeeded', output: FIXED_VALUE });

  // The views: the plain line, the terminal dashboard's row, the timeline's span.
  expect(eventLine({ type: 'step', step })).toMatch(/ step 1 fixed ask succeeded \([^)]+\) · answered by the runner$/);
  expect(stepDetail(step, Date.now())).toBe('answered by the runner');
  const row = buildTimeline(detail.run, detail.steps, detail.attempts, Date.now()).rows.find(
    (r) => r.key === 'step-1',
  )!;
  expect(row.spans.map((s) => s.kind)).toEqual(['calling']);
});
