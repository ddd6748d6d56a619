/** @jsxImportSource preact */
import type { JSX } from 'preact';
import type { Attempt } from '../../../api/dto.js';
import { formatTime, outcomeClass } from '../format.js';
import { formatDuration } from '../../../view/duration.js';
import { paths } from '../router.js';
import { Link } from './Common.js';

/** Drive requests, each one click from its full log (request and response headers and bodies). */
export function AttemptList(props: { runId: string; attempts: Attempt[]; now: number; empty: string }): JSX.Element {
  const { runId, attempts, now } = props;
  if (attempts.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <ol class="attempts" data-testid="attempts">
      {attempts.map((attempt) => (
        <li key={attempt.seq}>
          <Link href={paths.attempt(runId, attempt.seq)} class="attempt-item" testId="attempt-item">
            <span class="attempt-seq">#{attempt.seq}</span>
            <span class={`outcome outcome-${attempt.error ? 'error' : outcomeClass(attempt.outcome)}`}>
              {attempt.outcome}
            </span>
            <span class="mono">{attempt.responseStatus === null ? 'no answer' : `HTTP ${attempt.responseStatus}`}</span>
            <span class="muted">{formatTime(attempt.startedAt, now)}</span>
            <span class="attempt-duration">{formatDuration(attempt.durationMs)}</span>
          </Link>
        </li>
      ))}
    </ol>
  );
}
