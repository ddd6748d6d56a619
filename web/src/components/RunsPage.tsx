/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Run, RunStatus } from '../../../api/dto.js';
import { formatTime } from '../format.js';
import { formatDuration, formatRelative } from '../../../view/duration.js';
import { navigate, paths, type RunSearch } from '../router.js';
import { searchKey } from '../state.js';
import { RUN_STATUSES } from '../../../view/status.js';
import { useDashboard } from '../use-dashboard.js';
import { CopyButton, Link, ProtocolBadge, StatusBadge, useNow } from './Common.js';
import { BulkActions } from './BulkActions.js';
import { RunNotes } from './RunNotes.js';
import { RunSearchBar } from './RunSearchBar.js';

const NO_SEARCH: RunSearch = {};

/** The first level: runs newest first, a status filter and a search, live as runs start and change. */
export function RunsPage(props: { status: RunStatus | null; search?: RunSearch }): JSX.Element {
  const { api, dispatch, state, reloads, describe } = useDashboard();
  const { status } = props;
  const search = props.search ?? NO_SEARCH;
  const key = searchKey(search);
  const searching = Object.keys(search).length > 0;
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const now = useNow();

  useEffect(() => {
    let current = true;
    setError(null);
    api.listRuns({ status, search }).then(
      (page) => current && dispatch({ type: 'page', status, search, page, more: false }),
      (failure: unknown) => current && setError(describe(failure)),
    );
    return () => void (current = false);
  }, [status, key, reloads]);

  const list = state.list;
  const shown = list.loaded && list.status === status && searchKey(list.search) === key;
  const runs = shown ? list.ids.map((id) => state.runs[id]).filter((run): run is Run => run !== undefined) : [];

  const more = async (): Promise<void> => {
    setLoadingMore(true);
    try {
      dispatch({
        type: 'page',
        status,
        search,
        page: await api.listRuns({ status, search, cursor: list.nextCursor }),
        more: true,
      });
    } catch (failure) {
      setError(describe(failure));
    }
    setLoadingMore(false);
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1>Runs</h1>
        {shown ? (
          <span class="muted count">
            {runs.length === 1 ? '1 run' : `${runs.length}${list.nextCursor ? '+' : ''} runs`}
          </span>
        ) : null}
      </div>
      <nav class="filters" aria-label="Filter runs by status">
        <Link href={paths.runs(null, search)} class="chip" current={status === null}>
          all
        </Link>
        {RUN_STATUSES.map((s) => (
          <Link key={s} href={paths.runs(s, search)} class={`chip chip-${s}`} current={status === s}>
            {s}
          </Link>
        ))}
      </nav>
      <RunSearchBar search={search} onSearch={(next) => navigate(paths.runs(status, next))} />
      {shown ? (
        <BulkActions
          status={status}
          search={search}
          hasRuns={runs.length > 0}
          onDone={() =>
            api.listRuns({ status, search }).then(
              (page) => dispatch({ type: 'page', status, search, page, more: false }),
              (failure: unknown) => setError(describe(failure)),
            )
          }
        />
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {!shown ? (
        <p class="muted">Loading runs…</p>
      ) : runs.length === 0 ? (
        <div class="panel empty">
          {searching ? (
            <p>No {status ? `${status} ` : ''}runs match this search.</p>
          ) : status ? (
            <p>No {status} runs.</p>
          ) : (
            <p>No runs yet. Start one by sending a POST to a workflow route; it shows up here at once.</p>
          )}
        </div>
      ) : (
        <div class="panel run-table" role="table" aria-label="Runs">
          <div class="run-row run-head" role="row">
            <span role="columnheader">Status</span>
            <span role="columnheader">Run</span>
            <span role="columnheader" class="num">
              Steps
            </span>
            <span role="columnheader" class="num">
              Attempts
            </span>
            <span role="columnheader">Started</span>
            <span role="columnheader" class="num">
              Duration
            </span>
            <span role="columnheader" class="sr-only">
              Copy
            </span>
          </div>
          {runs.map((run) => (
            <RunRow key={run.id} run={run} now={now} />
          ))}
        </div>
      )}
      {shown && list.nextCursor ? (
        <button type="button" class="button more" onClick={more} disabled={loadingMore}>
          {loadingMore ? 'Loading…' : 'Older runs'}
        </button>
      ) : null}
    </div>
  );
}

function RunRow(props: { run: Run; now: number }): JSX.Element {
  const { run, now } = props;
  return (
    <div class="run-row" role="row" data-testid="run-row" data-run-id={run.id} data-status={run.status}>
      <span role="cell" class="cell-status">
        <StatusBadge status={run.status} />
      </span>
      <span role="cell" class="cell-run">
        <Link href={paths.run(run.id)} class="run-link mono">
          {run.id}
        </Link>
        <span class="run-url muted" title={run.url}>
          <ProtocolBadge run={run} /> {run.url}
        </span>
        <RunNotes run={run} now={now} compact />
      </span>
      <span role="cell" class="num" title="steps done">
        <span class="cell-label">steps </span>
        {run.stepsDone}
      </span>
      <span role="cell" class="num" title="drive requests">
        <span class="cell-label">attempts </span>
        {run.attempts}
      </span>
      <span role="cell" class="cell-time" title={new Date(run.createdAt).toISOString()}>
        {formatTime(run.createdAt, now)}
        <span class="muted small"> · {formatRelative(run.createdAt, now)}</span>
      </span>
      <span role="cell" class="num cell-duration">
        <span class="cell-label">took </span>
        {formatDuration((run.finishedAt ?? now) - run.createdAt)}
      </span>
      <span role="cell" class="cell-copy">
        <CopyButton text={run.id} label={`Copy run id ${run.id}`} />
      </span>
    </div>
  );
}
