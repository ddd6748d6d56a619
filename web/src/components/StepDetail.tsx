/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Attempt, Run, Step, StepLog } from '../../../api/dto.js';
import { formatTime, prettyBody } from '../format.js';
import { attemptsOfStep, noAttemptsText } from '../../../view/attempts.js';
import { formatDuration, formatRelative } from '../../../view/duration.js';
import { callAnswer, displayOutput } from '../../../view/step-value.js';
import { stepChild } from '../../../view/links.js';
import { stepKindView } from '../../../view/step-kinds/index.js';
import type { StepKind } from '../../../protocol/step-kinds/index.js';
import { paths } from '../router.js';
import { AttemptList } from './AttemptList.js';
import { StepLogs } from './StepLogs.js';
import { logsOfStep } from '../../../view/step-logs.js';
import { Body, CopyButton, ErrorBlock, Facts, HeadersTable, KindBadge, Link, Section, StatusBadge } from './Common.js';

/**
 * What each kind adds to the step view, one line per kind (the wording shared with the other
 * frontends is view/step-kinds/): facts after the shared ones, sections before the error (its
 * event, its child run), and its value (its output, or a call's exchange).
 */
interface WebStepKind {
  facts(step: Step, now: number): [string, string][];
  head(step: Step): JSX.Element | null;
  value(step: Step): JSX.Element | null;
}

const at =
  (label: string) =>
  (step: Step, now: number): [string, string][] =>
    step.until === null ? [] : [[label, `${formatTime(step.until, now)} (${formatRelative(step.until, now)})`]];
const none = (): null => null;
const output = (step: Step): JSX.Element => <StepOutput step={step} />;

const WEB_KINDS: Record<StepKind, WebStepKind> = {
  run: { facts: () => [], head: none, value: output },
  sleep: { facts: at('Wakes at'), head: none, value: none },
  wait: {
    facts: at('Times out at'),
    head: (step) => <EventId step={step} />,
    value: (step) => <StepOutput step={step} pending="Waiting for the event." />,
  },
  call: { facts: () => [], head: none, value: (step) => <CallExchange step={step} /> },
  invoke: { facts: () => [], head: (step) => <ChildRun step={step} />, value: output },
};

/** A kind this dashboard does not know (a newer runner's) shows its value like a `run`. */
function webKind(kind: string): WebStepKind {
  return Object.hasOwn(WEB_KINDS, kind) ? WEB_KINDS[kind as StepKind] : WEB_KINDS.run;
}

/** The third level: one step, with what its kind adds (wake-up, event, HTTP exchange) and its attempts. */
export function StepDetail(props: {
  run: Run;
  step: Step | undefined;
  index: number;
  steps: Step[];
  attempts: Attempt[];
  logs: readonly StepLog[];
  now: number;
}): JSX.Element {
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
    [
      'Executions (reported)',
      <span title="Starts the runner saw and committed: at least this many">{step.reportedExecutions}</span>,
    ],
    ['Failures', String(step.failures)],
  ];
  if (siblings.length > 0) facts.push(['Parallel with', siblings.map((s) => `#${s.index} ${s.name}`).join(', ')]);
  const kind = webKind(step.kind);
  facts.push(...kind.facts(step, now));

  return (
    <div class="detail" data-testid="step-detail">
      <header class="detail-head">
        <h2>
          <span class="muted">#{step.index}</span> {step.name}
        </h2>
      </header>
      <Facts items={facts} />
      {kind.head(step)}
      {step.error ? (
        <Section title="Error">
          <ErrorBlock error={step.error} />
        </Section>
      ) : null}
      {kind.value(step)}
      {stepKindView(step.kind).printsLogs ? (
        <Section title="Logs" testId="step-logs-section">
          <StepLogs runId={run.id} logs={logsOfStep(logs, step.index)} view="step" empty="This step printed nothing." />
        </Section>
      ) : null}
      <Section title="Attempts for this step">
        <AttemptList
          runId={run.id}
          attempts={attemptsOfStep(run, attempts, step)}
          now={now}
          empty={noAttemptsText(run)}
        />
      </Section>
    </div>
  );
}

/** A `wait`: the event it waits for, to copy for a `notify`. */
function EventId(props: { step: Step }): JSX.Element | null {
  const { eventId } = props.step;
  if (eventId === null) return null;
  return (
    <Section title="Event" actions={<CopyButton text={eventId} label="Copy event id" />}>
      <p class="mono event-id" data-testid="event-id">
        {eventId}
      </p>
    </Section>
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

/** A step's value; `pending`: what a running step of this kind is doing (a wait waits for its event). */
function StepOutput(props: { step: Step; pending?: string }): JSX.Element | null {
  const { step, pending } = props;
  const output = useMemo(() => displayOutput(step), [step.outputEncoded]);
  if (step.error && step.status !== 'succeeded') return null;
  return (
    <Section title="Output">
      {step.status === 'succeeded' ? (
        <Body text={output} label="step output" testId="step-output" />
      ) : pending !== undefined && step.status === 'running' ? (
        <p class="muted">{pending}</p>
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
