/** @jsxImportSource preact */
import type { JSX } from 'preact';
import type { StepLog } from '../../../api/dto.js';
import { logSection } from '../../../view/step-logs.js';
import { paths } from '../router.js';
import { Link } from './Common.js';

/**
 * What a step printed (`console.*` and `context.log` inside `context.run`), one block per
 * execution with the attempt it ran in, failed ones too; from the run's snapshot.
 * On the step page each block links its attempt; on the attempt page, its step.
 */
export function StepLogs(props: {
  runId: string;
  logs: readonly StepLog[];
  view: 'step' | 'attempt';
  empty: string;
}): JSX.Element {
  const { runId, logs, view } = props;
  if (logs.length === 0)
    return (
      <p class="muted" data-testid="step-logs-empty">
        {props.empty}
      </p>
    );
  return (
    <div class="step-logs" data-testid="step-logs">
      {logs.map((log) => {
        const section = logSection(log);
        return (
          <div class="log-block" data-testid="step-log" data-attempt={log.attempt} key={`${log.index}:${log.attempt}`}>
            <p class="log-head">
              {view === 'step' ? (
                <Link href={paths.attempt(runId, log.attempt)}>attempt #{log.attempt}</Link>
              ) : (
                <Link href={paths.step(runId, log.index)}>
                  step #{log.index} {log.name}
                </Link>
              )}{' '}
              <span class={`status status-${log.status}`}>{log.status}</span>{' '}
              <span class="muted">{section.heading.split(' · ').slice(2).join(' · ')}</span>
            </p>
            <pre class="log-lines">
              {section.rows.map((row, i) => (
                <div class={`log-line log-${row.tone}`} data-testid="log-line" data-level={row.level} key={i}>
                  <span class="log-time">{row.time}</span> <span class="log-level">{row.level.padEnd(5)}</span>{' '}
                  <span class="log-text">{row.text}</span>
                </div>
              ))}
              {section.truncated ? (
                <div class="log-line log-truncated" data-testid="log-truncated">
                  {section.truncated}
                </div>
              ) : null}
            </pre>
          </div>
        );
      })}
    </div>
  );
}
