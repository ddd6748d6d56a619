/** @jsxImportSource preact */
import type { JSX } from 'preact';
import type { Step } from '../../../api/dto.js';
import { formatTime } from '../format.js';
import { formatDuration, formatRelative } from '../../../view/duration.js';
import { stepKindView } from '../../../view/step-kinds/index.js';
import { paths } from '../router.js';
import { blocksOf } from '../state.js';
import { KindBadge, Link, StatusBadge } from './Common.js';

/** What a step waits on, in one line (a sleep's wake-up, a wait's event, a call's request), as its kind shows it. */
export function stepSummary(step: Step, now: number): string {
  return stepKindView(step.kind).summary(
    step,
    (ms) => formatTime(ms, now),
    (ms) => formatRelative(ms, now),
  );
}

/** The second level: a run's steps in order, parallel ones (one `group`) boxed together. */
export function StepList(props: { runId: string; steps: Step[]; selected?: number; now: number }): JSX.Element {
  const { runId, steps, selected, now } = props;
  if (steps.length === 0) return <p class="muted">No steps yet.</p>;
  const item = (step: Step, summary = stepSummary(step, now)): JSX.Element => (
    <li key={step.index}>
      <Link
        href={paths.step(runId, step.index)}
        class={`step-item${selected === step.index ? ' selected' : ''}`}
        current={selected === step.index}
        testId="step-item"
      >
        <span class="step-line">
          <span class="step-index">#{step.index}</span>
          <span class="step-name" title={step.name}>
            {step.name}
          </span>
          <KindBadge kind={step.kind} />
          <StatusBadge status={step.status} />
          <span class="step-duration">
            {formatDuration(step.durationMs ?? (step.finishedAt === null ? now - step.startedAt : null), '–')}
          </span>
        </span>
        {summary ? (
          <span class="step-line step-sub">
            <span class="step-summary">{summary}</span>
          </span>
        ) : null}
      </Link>
    </li>
  );
  return (
    <ol class="steps" data-testid="steps">
      {blocksOf(steps).map((block) =>
        block.kind === 'single' ? (
          item(block.step)
        ) : (
          <li key={`group-${block.group}`} class="parallel" data-testid="parallel-group">
            <span class="parallel-label">parallel · {block.steps.length} steps</span>
            <ol class="steps">{block.steps.map((step) => item(step))}</ol>
          </li>
        ),
      )}
    </ol>
  );
}
