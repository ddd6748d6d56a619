/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Attempt, Run, Step, StepLog } from '../../../api/dto.js';
import { formatTime, prettyBody } from '../format.js';
import { attemptsOfStep, noAttemptsText } from '../../../view/attempts.js';
import { formatDuration, formatRelative } from '../../../view/duration.js';
import { callAnswer, displayOutput } from '../../../view/step-value.js';
import { stepChild } from '../../../view/links.js';
import { paths } from '../router.js';
import { AttemptList } from './AttemptList.js';
import { StepLogs } from './StepLogs.js';
import { logsOfStep } from '../../../view/step-logs.js';
import { Body, CopyButton, ErrorBlock, Facts, HeadersTable, KindBadge, Link, Section, StatusBadge } from './Common.js';

/** The third level: one step, with what its kind adds (wake-up, event, HTTP exchange) and its attempts. */
export function StepDetail(props: { run: Run; step: Step | undefined; index: number; steps: Step[]; attempts: Attempt[]; logs: readonly StepLog[]; now: number }): JSX.Element {
  const { run, step, index, steps, attempts, logs, now } = props;
  if (!step) return <p class="muted">Step #{index} has not started (yet).</p>;
  const siblings = step.group === null ? [] : steps.filter((s) => s.group === step.group && s.index !== step.index);
  const facts: [string, JSX.Element | string][] = [
    ['Kind', <KindBadge kind={step.kind} />],
    ['Status', <StatusBadge status={step.status} testId="step-status" />],
    ['Started', formatTime(step.startedAt, now)],
    ['Finished', formatTime(step.finishedAt, now)],
    ['Duration', formatDuration(step.durationMs, '–')],
    // A lower bound: an execution whose start never reached the runner is not counted.
    ['Executions (reported)', <span title="Starts the runner saw and committed: at least this many">{step.reportedExecutions}</span>],
    ['Failures', String(step.failures)],
  ];
  if (siblings.length > 0) facts.push(['Parallel with', siblings.map((s) => `#${s.index} ${s.name}`).join(', ')]);
  if (step.kind === 'sleep' && step.until !== null) facts.push(['Wakes at', `${formatTime(step.until, now)} (${formatRelative(step.until, now)})`]);
  if (step.kind === 'wait' && step.until !== null) facts.push(['Times out at', `${formatTime(step.until, now)} (${formatRelative(step.until, now)})`]);

  return (
    <div class="detail" data-testid="step-detail">
      <header class="detail-head">
        <h2>
          <span class="muted">#{step.index}</span> {step.name}
        </h2>
      </header>
      <Facts items={facts} />
      {step.kind === 'wait' && step.eventId !== null ? (
        <Section title="Event" actions={<CopyButton text={step.eventId} label="Copy event id" />}>
          <p class="mono event-id" data-testid="event-id">
            {step.eventId}
          </p>
        </Section>
      ) : null}
      {step.kind === 'invoke' ? <ChildRun step={step} /> : null}
      {step.error ? (
        <Section title="Error">
          <ErrorBlock error={step.error} />
        </Section>
      ) : null}
      {step.kind === 'call' ? <CallExchange step={step} /> : <StepOutput step={step} />}
      {step.kind === 'run' ? (
        <Section title="Logs" testId="step-logs-section">
          <StepLogs runId={run.id} logs={logsOfStep(logs, step.index)} view="step" empty="This step printed nothing." />
        </Section>
      ) : null}
      <Section title="Attempts for this step">
        <AttemptList runId={run.id} attempts={attemptsOfStep(run, attempts, step)} now={now} empty={noAttemptsText(run)} />
      </Section>
    </div>
  );
}

/** An `invoke`: the child run it started (a link), and the route it runs. */
function ChildRun(props: { step: Step }): JSX.Element {
  const { step } = props;
  const child = stepChild(step);
  return (
    <Section title="Child run">
      {child ? (
        <p>
          <Link href={paths.run(child)} class="mono" testId="child-run-link">
            {child}
          </Link>
        </p>
      ) : (
        <p class="muted">Not started yet.</p>
      )}
      {step.request ? <p class="mono request-line">POST {step.request.url}</p> : null}
    </Section>
  );
}

function StepOutput(props: { step: Step }): JSX.Element | null {
  const { step } = props;
  const output = useMemo(() => displayOutput(step), [step.outputEncoded]);
  if (step.kind === 'sleep' || (step.error && step.status !== 'succeeded')) return null;
  return (
    <Section title="Output">
      {step.status === 'succeeded' ? (
        <Body text={output} label="step output" testId="step-output" />
      ) : step.kind === 'wait' && step.status === 'running' ? (
        <p class="muted">Waiting for the event.</p>
      ) : (
        <p class="muted">No output ({step.status}).</p>
      )}
    </Section>
  );
}

/** A `call`: the request the runner sent and the answer it got (the step's output). */
function CallExchange(props: { step: Step }): JSX.Element {
  const { step } = props;
  const request = step.request;
  const answer = useMemo(() => callAnswer(step), [step.outputEncoded]);
  const requestBody = useMemo(() => prettyBody(request?.body), [request?.body]);
  return (
    <>
      <Section title="Request" testId="call-request">
        {request ? (
          <>
            <p class="mono request-line">
              {request.method} {request.url}
            </p>
            <h4>Headers</h4>
            <HeadersTable headers={request.headers} />
            <h4>Body</h4>
            <Body text={requestBody} label="call request body" empty="(no body)" />
          </>
        ) : (
          <p class="muted">Not recorded.</p>
        )}
      </Section>
      <Section title="Response" testId="call-response">
        {answer ? (
          <>
            <p class="mono">
              HTTP <span data-testid="call-status">{answer.status}</span>
            </p>
            <h4>Headers</h4>
            <HeadersTable headers={answer.headers} testId="call-headers" />
            <h4>Body</h4>
            <Body text={answer.body} label="call response body" empty="(no body)" testId="call-body" />
          </>
        ) : (
          <p class="muted">{step.status === 'succeeded' ? 'Not readable.' : 'No answer yet.'}</p>
        )}
      </Section>
    </>
  );
}
