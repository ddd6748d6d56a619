/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { coalesce } from '../../../api/coalesce.js';
import { eventRunId, isSlim } from '../../../api/events.js';
import { ClientError } from '../../../api/errors.js';
import { createApi, tokenStore, type Api } from '../api.js';
import { followEvents, type StreamStatus } from '../events.js';
import { useRoute } from '../router.js';
import { initialState, reduce } from '../state.js';
import { DashboardContext, type Dashboard } from '../use-dashboard.js';
import { Link } from './Common.js';
import { Login } from './Login.js';
import { RunPage } from './RunPage.js';
import { RunsPage } from './RunsPage.js';
import { SchedulesPage } from './SchedulesPage.js';
import { StoreFooter } from './StoreFooter.js';

/**
 * The dashboard: asks the runner whether reads need the token here (`GET /v1/session`), shows
 * the login form when they do and none is stored for this tab, else the live pages.
 */
export function App(): JSX.Element {
  const api = useMemo(() => createApi(() => tokenStore.get()), []);
  const [token, setToken] = useState(tokenStore.get);
  const [needsToken, setNeedsToken] = useState<boolean | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [loginNote, setLoginNote] = useState<string | null>(null);

  useEffect(() => {
    api.session().then(
      (session) => setNeedsToken(session.needsToken),
      (error: unknown) => setProblem(error instanceof Error ? error.message : String(error)),
    );
  }, [api]);

  const changeToken = (next: string | null, note: string | null = null): void => {
    tokenStore.set(next);
    setToken(next);
    setLoginNote(note);
  };

  if (problem) {
    return (
      <Shell stream="offline">
        <div class="panel notice" role="alert">
          <h2>The runner did not answer</h2>
          <p>{problem}</p>
        </div>
      </Shell>
    );
  }
  if (needsToken === null) return <p class="boot">Connecting to the runner…</p>;
  if (needsToken && token === null) {
    return (
      <Shell>
        <Login api={api} note={loginNote} onToken={(value) => changeToken(value)} />
      </Shell>
    );
  }
  return (
    <Live
      key={token ?? ''}
      api={api}
      canWrite={!needsToken || token !== null}
      onSignOut={token === null ? undefined : () => changeToken(null)}
      onUnauthorized={() => changeToken(null, 'The runner refused the token: sign in again.')}
    />
  );
}

function Shell(props: {
  children: JSX.Element;
  stream?: StreamStatus;
  onSignOut?: () => void;
  footer?: JSX.Element;
}): JSX.Element {
  const labels: Record<StreamStatus, string> = {
    connecting: 'connecting…',
    live: 'live',
    offline: 'reconnecting…',
    unauthorized: 'signed out',
  };
  return (
    <div class="app">
      <header class="topbar">
        <Link href="/" class="brand" label="wfkit runner: all runs">
          <img src="/favicon.svg" alt="" width="22" height="22" />
          <span>wfkit</span>
          <span class="brand-sub">runner</span>
        </Link>
        <Link href="/schedules" class="button subtle" testId="schedules-link">
          Schedules
        </Link>
        <span class="spacer" />
        {props.stream ? (
          <span class={`stream stream-${props.stream}`} data-testid="stream" title="Live updates from GET /v1/events">
            {labels[props.stream]}
          </span>
        ) : null}
        {props.onSignOut ? (
          <button type="button" class="button subtle" onClick={props.onSignOut}>
            Sign out
          </button>
        ) : null}
      </header>
      <main class="main">{props.children}</main>
      {props.footer}
    </div>
  );
}

function Live(props: { api: Api; canWrite: boolean; onSignOut?: () => void; onUnauthorized: () => void }): JSX.Element {
  const [state, dispatch] = useReducer(reduce, initialState);
  const [stream, setStream] = useState<StreamStatus>('connecting');
  const [reloads, setReloads] = useState(0);
  const route = useRoute();
  const { onUnauthorized } = props;
  // Slim events leave bodies out: the open run is read again, once per burst of its events.
  const openRunId = useRef<string | null>(null);
  openRunId.current = route.page === 'run' ? route.runId : null;
  const refreshOpenRun = useMemo(
    () =>
      coalesce(async () => {
        const id = openRunId.current;
        if (id !== null) dispatch({ type: 'detail', detail: await props.api.getRun(id) });
      }),
    [],
  );

  useEffect(() => {
    const what =
      route.page === 'run'
        ? route.step !== undefined
          ? `step #${route.step} · ${route.runId}`
          : route.runId
        : route.page === 'runs'
          ? `${route.status ?? 'all'} runs`
          : route.page === 'schedules'
            ? 'schedules'
            : 'not found';
    document.title = `${what} · wfkit runner`;
  }, [route]);

  useEffect(
    () =>
      followEvents({
        client: props.api.client,
        onEvent: (event) => {
          dispatch({ type: 'event', event });
          if (isSlim(event) && eventRunId(event) === openRunId.current) refreshOpenRun();
        },
        onStatus: (status) => {
          setStream(status);
          if (status === 'unauthorized') onUnauthorized();
        },
        onOpen: () => setReloads((n) => n + 1),
      }),
    [],
  );

  const dashboard: Dashboard = {
    state,
    dispatch,
    api: props.api,
    canWrite: props.canWrite,
    reloads,
    stream,
    describe: (error) => {
      if (error instanceof ClientError && error.status === 401) onUnauthorized();
      return error instanceof ClientError
        ? error.runnerMessage
        : error instanceof Error
          ? error.message
          : String(error);
    },
  };

  return (
    <DashboardContext.Provider value={dashboard}>
      <Shell stream={stream} onSignOut={props.onSignOut} footer={<StoreFooter api={props.api} />}>
        {route.page === 'runs' ? (
          <RunsPage status={route.status} {...(route.search && { search: route.search })} />
        ) : route.page === 'run' ? (
          <RunPage runId={route.runId} step={route.step} attempt={route.attempt} />
        ) : route.page === 'schedules' ? (
          <SchedulesPage />
        ) : (
          <div class="panel notice">
            <h2>Nothing here</h2>
            <p>
              No page at <code>{route.path}</code>. <Link href="/">All runs</Link>
            </p>
          </div>
        )}
      </Shell>
    </DashboardContext.Provider>
  );
}
