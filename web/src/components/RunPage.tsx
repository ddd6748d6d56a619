/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Run } from '../../../api/dto.js';
import { ClientError } from '../../../api/errors.js';
import { formatTime } from '../format.js';
import { formatDuration, formatRelative } from '../../../view/duration.js';
import { navigate, paths } from '../router.js';
import { attemptsOf, stepsOf } from '../state.js';
import { useDashboard } from '../use-dashboard.js';
import { AttemptDetail } from './AttemptDetail.js';
import { CopyButton, Facts, Link, ProtocolBadge, StatusBadge, useNow } from './Common.js';
import { NOT_RESTARTABLE, restartable } from '../../../view/protocol.js';
import { runParent } from '../../../view/links.js';
import { RunNotes } from './RunNotes.js';
import { RunOverview } from './RunOverview.js';
import { StepDetail } from './StepDetail.js';
import { StepList } from './StepList.js';
import { Timeline } from './Timeline.js';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** A run (`/runs/:id`), with a step (`/steps/:index`) or an attempt (`/attempts/:seq`) open beside it. */
export function RunPage(props: { runId: string; step?: number; attempt?: number }): JSX.Element {
  const { api, dispatch, state, reloads, describe } = useDashboard();
  const { runId, step, attempt } = props;
  const [error, setError] = useState<{ missing: boolean; message: string } | null>(null);
  const now = useNow();

  useEffect(() => {
    let current = true;
    setError(null);
    dispatch({ type: 'open', runId });
    api.getRun(runId).then(
      (detail) => current && dispatch({ type: 'detail', detail }),
      (failure: unknown) =>
        current &&
        setError({ missing: failure instanceof ClientError && failure.status === 404, message: describe(failure) }),
    );
    return () => void (current = false);
  }, [runId, reloads]);

  const run = state.runs[runId];
  const detail = state.details[runId];
  // Kept while the detail is unchanged, so the timeline is not rebuilt on every tick of `now`.
  const steps = useMemo(() => stepsOf(detail), [detail]);
  const attempts = useMemo(() => attemptsOf(detail), [detail]);
  const crumbs = (
    <nav class="crumbs" aria-label="Breadcrumb">
      <Link href="/">Runs</Link>
      <span aria-hidden="true">›</span>
      <Link href={paths.run(runId)} class="mono" current={step === undefined && attempt === undefined}>
        {runId}
      </Link>
      {step !== undefined ? (
        <span>› step #{step}</span>
      ) : attempt !== undefined ? (
        <span>› attempt #{attempt}</span>
      ) : null}
    </nav>
  );
  if (!run || !detail?.loaded) {
    return (
      <div class="page">
        {crumbs}
        {error ? (
          <div class="panel notice" role="alert">
            <h2>{error.missing ? 'No such run' : 'Could not load this run'}</h2>
            <p>{error.message}</p>
          </div>
        ) : (
          <p class="muted">Loading the run…</p>
        )}
      </div>
    );
  }

  const selected = step !== undefined || attempt !== undefined;
  return (
    <div class="page">
      {crumbs}
      <RunHeader run={run} now={now} />
      <section class="panel timeline-panel" aria-label="Timeline">
        <header class="section-head">
          <h2>Timeline</h2>
        </header>
        <Timeline run={run} steps={steps} attempts={attempts} selected={step} now={now} />
      </section>
      <div class={`split${selected ? ' has-selection' : ''}`}>
        <section class="panel steps-panel" aria-label="Steps">
          <header class="section-head">
            <h2>Steps</h2>
            <span class="muted">{steps.length}</span>
          </header>
          <StepList runId={runId} steps={steps} selected={step} now={now} />
        </section>
        <section class="panel detail-panel" aria-label="Details">
          {step !== undefined ? (
            <StepDetail
              run={run}
              step={steps.find((s) => s.index === step)}
              index={step}
              attempts={attempts}
              steps={steps}
              logs={detail?.logs ?? []}
              now={now}
            />
          ) : attempt !== undefined ? (
            <AttemptDetail
              run={run}
              attempt={attempts.find((a) => a.seq === attempt)}
              seq={attempt}
              attempts={attempts}
              steps={steps}
              logs={detail?.logs ?? []}
              now={now}
            />
          ) : (
            <RunOverview run={run} attempts={attempts} now={now} />
          )}
        </section>
      </div>
    </div>
  );
}

function RunHeader(props: { run: Run; now: number }): JSX.Element {
  const { run, now } = props;
  const { api, canWrite, describe, dispatch } = useDashboard();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const finished = FINISHED.has(run.status);

  const act = async (action: 'cancel' | 'rerun' | 'resume'): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const { run: changed } = await api[action](run.id);
      dispatch({ type: 'event', event: { type: 'run', run: changed } });
      if (action === 'rerun') navigate(paths.run(changed.id));
      // Resume cleared the steps that failed: read the run again rather than keep showing them.
      if (action === 'resume') dispatch({ type: 'detail', detail: await api.getRun(run.id) });
    } catch (failure) {
      setError(describe(failure));
    }
    setConfirming(false);
    setBusy(false);
  };

  const facts: [string, JSX.Element | string][] = [
    ['Started', <span title={new Date(run.createdAt).toISOString()}>{formatTime(run.createdAt, now)}</span>],
    [run.finishedAt === null ? 'Running for' : 'Took', formatDuration((run.finishedAt ?? now) - run.createdAt)],
    ['Steps done', String(run.stepsDone)],
    ['Attempts', String(run.attempts)],
    ['Retries', `${run.retries} (base ${formatDuration(run.retryDelayMs)})`],
  ];
  if (!finished && run.nextAt !== null)
    facts.push(['Next drive', `${formatTime(run.nextAt, now)} (${formatRelative(run.nextAt, now)})`]);
  if (run.failures > 0)
    facts.push([
      run.failureCall === 'pending' ? 'failureFunction failures in a row' : 'Failed attempts in a row',
      String(run.failures),
    ]);
  const parent = runParent(run);
  if (parent) {
    facts.push([
      'Invoked by',
      <Link href={paths.step(parent.parentRunId, parent.parentStepIndex)} class="mono" testId="parent-run-link">
        {parent.parentRunId} › step #{parent.parentStepIndex}
      </Link>,
    ]);
  }
  // Why there is no Resume or Rerun button: said once, where the buttons would be explained.
  if (!restartable(run))
    facts.push([
      'Protocol',
      <span title={NOT_RESTARTABLE} data-testid="protocol-fact">
        Upstash Workflow · cancel only, no resume or rerun
      </span>,
    ]);
  if (run.failureCall !== null)
    facts.push([
      'failureFunction',
      `${run.failureCall} · ${run.failureCallAttempts} attempt${run.failureCallAttempts === 1 ? '' : 's'}`,
    ]);

  return (
    <section class="panel run-header" aria-label="Run">
      <div class="run-title">
        <StatusBadge status={run.status} testId="run-status" />
        <h1 class="mono" data-testid="run-id">
          {run.id}
        </h1>
        <CopyButton text={run.id} label="Copy run id" />
        <ProtocolBadge run={run} />
        <span class="spacer" />
        {canWrite ? (
          <div class="actions">
            {!finished && !confirming ? (
              <button type="button" class="button danger" onClick={() => setConfirming(true)} disabled={busy}>
                Cancel run
              </button>
            ) : null}
            {confirming ? (
              <span class="confirm">
                <span>Cancel this run?</span>
                <button type="button" class="button danger" onClick={() => act('cancel')} disabled={busy}>
                  Yes, cancel
                </button>
                <button type="button" class="button subtle" onClick={() => setConfirming(false)} disabled={busy}>
                  No
                </button>
              </span>
            ) : null}
            {restartable(run) && (run.status === 'failed' || run.status === 'cancelled') ? (
              <button
                type="button"
                class="button"
                onClick={() => act('resume')}
                disabled={busy}
                title="Start this run again at the step that failed; succeeded steps do not run again"
              >
                Resume
              </button>
            ) : null}
            {restartable(run) ? (
              <button
                type="button"
                class="button"
                onClick={() => act('rerun')}
                disabled={busy}
                title="Start a new run with the same input"
              >
                Rerun
              </button>
            ) : null}
          </div>
        ) : null}
      </div>
      <p class="run-url mono" title="The workflow route">
        {run.url}
      </p>
      <Facts items={facts} />
      <RunNotes run={run} now={now} testId="run-notes" />
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
