/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Attempt, Run } from '../../../api/dto.js';
import { formatTime, prettyBody } from '../format.js';
import { displayOutput } from '../../../view/step-value.js';
import { AttemptList } from './AttemptList.js';
import { Body, ErrorBlock, HeadersTable, Section } from './Common.js';

/** A run's own detail: its result, the start request (headers and body), and every attempt. */
export function RunOverview(props: { run: Run; attempts: Attempt[]; now: number }): JSX.Element {
  const { run, attempts, now } = props;
  // The page re-renders each second (times): decode the bodies only when they change.
  const output = useMemo(() => displayOutput(run), [run.outputEncoded]);
  const body = useMemo(() => prettyBody(run.body), [run.body]);
  return (
    <div class="detail">
      <Section title="Result" testId="run-result">
        {run.status === 'completed' && run.outputEncoded === null ? (
          <p class="muted">Completed; the workflow returned nothing (undefined).</p>
        ) : run.status === 'completed' ? (
          <Body text={output} label="run output" testId="run-output" />
        ) : run.status === 'failed' && run.error ? (
          <ErrorBlock error={run.error} />
        ) : run.status === 'cancelled' ? (
          <p>Cancelled at {formatTime(run.finishedAt, now)}.</p>
        ) : (
          <p class="muted">Not finished yet ({run.status}).</p>
        )}
      </Section>
      <Section title="Start request">
        <h4>Headers</h4>
        <HeadersTable headers={run.headers} testId="run-headers" />
        <h4>Body</h4>
        <Body text={body} label="start body" empty="(no body)" testId="run-body" />
      </Section>
      <Section title="Attempts">
        <AttemptList runId={run.id} attempts={attempts} now={now} empty="No drive request yet." />
      </Section>
    </div>
  );
}
