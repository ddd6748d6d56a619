/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Attempt, Run, Step, StepLog } from '../../../api/dto.js';
import { formatTime, outcomeClass, prettyBody } from '../format.js';
import { stepsOfAttempt } from '../../../view/attempts.js';
import { formatDuration } from '../../../view/duration.js';
import { paths } from '../router.js';
import { Body, ErrorBlock, Facts, HeadersTable, Link, Section } from './Common.js';
import { StepLogs } from './StepLogs.js';

/** One drive request's full log: what the runner sent, what the route answered, how it ended. */
export function AttemptDetail(props: {
  run: Run;
  attempt: Attempt | undefined;
  seq: number;
  attempts: readonly Attempt[];
  steps: Step[];
  logs: readonly StepLog[];
  now: number;
}): JSX.Element {
  const { run, attempt, seq, attempts, steps, logs, now } = props;
  const requestBody = useMemo(() => prettyBody(attempt?.requestBody), [attempt?.requestBody]);
  if (!attempt) return <p class="muted">No attempt #{seq} (yet).</p>;
  const touched = stepsOfAttempt(run, attempts, steps, attempt);
  return (
    <div class="detail" data-testid="attempt-detail">
      <header class="detail-head">
        <h2>Attempt #{attempt.seq}</h2>
      </header>
      <Facts
        items={[
          [
            'Outcome',
            <span class={`outcome outcome-${attempt.error ? 'error' : outcomeClass(attempt.outcome)}`}>
              {attempt.outcome}
            </span>,
          ],
          ['Started', formatTime(attempt.startedAt, now)],
          ['Duration', formatDuration(attempt.durationMs)],
          ['Steps', touched.length === 0 ? '–' : <StepLinks runId={run.id} steps={touched} />],
        ]}
      />
      {attempt.error ? (
        <Section title="Error">
          <ErrorBlock error={attempt.error} />
        </Section>
      ) : null}
      {logs.some((log) => log.attempt === attempt.seq) ? (
        <Section title="Step logs" testId="attempt-logs-section">
          <StepLogs runId={run.id} logs={logs.filter((log) => log.attempt === attempt.seq)} view="attempt" empty="" />
        </Section>
      ) : null}
      <Section title="Request">
        <p class="mono request-line">POST {attempt.requestUrl}</p>
        <h4>Headers</h4>
        <HeadersTable headers={attempt.requestHeaders} testId="attempt-request-headers" />
        <h4>Body</h4>
        <Body text={requestBody} label="drive request body" />
      </Section>
      <Section title="Response">
        <p class="mono">{attempt.responseStatus === null ? 'No answer' : `HTTP ${attempt.responseStatus}`}</p>
        <h4>Headers</h4>
        <HeadersTable headers={attempt.responseHeaders} testId="attempt-response-headers" />
        <h4>Body</h4>
        <Body text={attempt.responseBody ?? ''} label="drive response body" testId="attempt-response-body" />
      </Section>
    </div>
  );
}

function StepLinks(props: { runId: string; steps: Step[] }): JSX.Element {
  return (
    <span class="step-links">
      {props.steps.map((step) => (
        <Link key={step.index} href={paths.step(props.runId, step.index)}>
          #{step.index} {step.name}
        </Link>
      ))}
    </span>
  );
}
