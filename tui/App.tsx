import { Box, useApp, useWindowSize } from 'ink';
import { useEffect, useReducer, type ReactNode } from 'react';
import { RunList } from './components/RunList.js';
import { RunView } from './components/RunView.js';
import { StatusBar } from './components/StatusBar.js';
import { StepView } from './components/StepView.js';
import { Footer } from './components/Footer.js';
import { LogPane } from './components/LogPane.js';
import { errorMessage, type DataSource } from './data-source.js';
import { workflowPath } from './format.js';
import { useKeymap } from './hooks/use-keymap.js';
import { useSchedules } from './hooks/use-schedules.js';
import { scheduleSummary } from './schedule-summary.js';
import { useLogFeed } from './hooks/use-log-feed.js';
import { useRunnerEvents, type RunnerEventsOptions } from './hooks/use-runner-events.js';
import { useRunSearch } from './hooks/use-run-search.js';
import { bodyRows, logPaneRows, runRows, type Size } from './layout.js';
import type { LogFeed } from './log-feed.js';
import { detailLines, selectedRestartable, selectedStep } from './selectors.js';
import { bodySize, initialState, reducer, type DashboardState } from './state.js';

export interface AppProps {
  source: DataSource;
  /** First word of the status bar. @default "wfkit" */
  title?: string;
  /** Shown under it on the run list (e.g. how apps reach the runner). */
  subtitle?: string;
  /** @default true; the caller turns it off for NO_COLOR */
  color?: boolean;
  now?: () => number;
  /** How often durations of unfinished runs move on. @default 1000 */
  tickMs?: number;
  events?: RunnerEventsOptions;
  /** The app's output and `wf dev`'s findings, for the log pane (`l` toggles it); no pane without it. */
  log?: LogFeed;
}

/** Second status line: where you are. */
function context(state: DashboardState, subtitle: string | undefined, schedules = ''): string {
  const run = state.detail ? state.runs.get(state.detail.runId) : undefined;
  const step = selectedStep(state);
  if (state.view === 'runs') {
    if (state.filter !== '') return `filter "${state.filter}" · ${state.visible.length} of ${state.order.length} runs`;
    const base = subtitle ?? 'runs, newest first';
    // First: the subtitle is long and cut at the right edge.
    return schedules === '' ? base : `${schedules} · ${base}`;
  }
  const where = `runs › ${state.detail?.runId ?? ''}${run ? ` ${workflowPath(run.url)}` : ''}`;
  return state.view === 'step' && step ? `${where} › step ${step.index} ${step.name}` : where;
}

/** The dashboard at the terminal's size, following resizes. */
export function App(props: AppProps) {
  const size = useWindowSize();
  return <Dashboard {...props} size={{ columns: size.columns, rows: size.rows }} />;
}

/** The dashboard at a given size: state in a pure reducer, fed by runner events and keys; components take props. */
export function Dashboard({
  source,
  title = 'wfkit',
  subtitle,
  color = true,
  size,
  now = Date.now,
  tickMs = 1000,
  events,
  log,
}: AppProps & { size: Size }) {
  const [state, dispatch] = useReducer(reducer, undefined, () => initialState(size, now(), log !== undefined));
  const { exit } = useApp();

  useEffect(() => dispatch({ type: 'resize', columns: size.columns, rows: size.rows }), [size.columns, size.rows]);
  useEffect(() => {
    const timer = setInterval(() => dispatch({ type: 'tick', now: now() }), tickMs);
    return () => clearInterval(timer);
  }, [now, tickMs]);
  useRunnerEvents(source, dispatch, state.detail?.runId ?? null, events);
  useRunSearch(source, dispatch, state.filter, state.filtering, now);
  useLogFeed(log, dispatch);
  const schedules = scheduleSummary(useSchedules(source), state.now);
  useKeymap(state, dispatch, {
    quit: () => exit(),
    cancel: (id) =>
      void source.cancel(id).then(
        () => dispatch({ type: 'notice', text: `cancelled ${id}` }),
        (error: unknown) =>
          dispatch({ type: 'notice', text: `Cannot cancel ${id}: ${errorMessage(error)}`, error: true }),
      ),
    rerun: (id) =>
      void source.rerun(id).then(
        (run) => dispatch({ type: 'notice', text: `rerun of ${id} started: ${run.id}` }),
        (error: unknown) =>
          dispatch({ type: 'notice', text: `Cannot rerun ${id}: ${errorMessage(error)}`, error: true }),
      ),
    resume: (id) =>
      void source.resume(id).then(
        () => dispatch({ type: 'notice', text: `resumed ${id} from its failed step` }),
        (error: unknown) =>
          dispatch({ type: 'notice', text: `Cannot resume ${id}: ${errorMessage(error)}`, error: true }),
      ),
  });

  const { columns: width } = state.size;
  const views = bodySize(state);
  const height = bodyRows(views);
  let body: ReactNode;
  if (state.view === 'runs') {
    const rows = runRows(views);
    const runs = state.visible.slice(state.top, state.top + rows).map((id) => state.runs.get(id)!);
    body = (
      <RunList
        runs={runs}
        selected={state.cursor - state.top}
        width={width}
        height={height}
        now={state.now}
        color={color}
        total={state.order.length}
        filter={state.filter}
      />
    );
  } else if (state.view === 'run' && state.detail) {
    const run = state.runs.get(state.detail.runId);
    body = (
      <RunView
        run={run}
        detail={state.detail}
        cursor={state.stepCursor}
        top={state.stepTop}
        width={width}
        height={height}
        now={state.now}
        color={color}
      />
    );
  } else {
    body = (
      <StepView
        step={selectedStep(state)}
        lines={detailLines(state)}
        scroll={state.scroll}
        width={width}
        height={height}
        color={color}
      />
    );
  }
  return (
    <Box flexDirection="column" width={width} height={state.size.rows}>
      <StatusBar
        title={title}
        source={source.label}
        connection={state.connection}
        total={state.runs.size}
        counts={state.runs.counts}
        notice={state.notice}
        context={context(state, subtitle, schedules)}
        width={width}
        color={color}
      />
      <Box flexDirection="column" height={height} overflow="hidden">
        {body}
      </Box>
      {state.log.open && log && logPaneRows(state.size) > 0 ? (
        <LogPane
          title={log.title}
          lines={state.log.lines}
          total={state.log.total}
          width={width}
          height={logPaneRows(state.size)}
          color={color}
        />
      ) : null}
      <Footer
        view={state.view}
        filtering={state.filtering}
        filter={state.filter}
        width={width}
        log={state.log.enabled}
        restartable={selectedRestartable(state)}
      />
    </Box>
  );
}
