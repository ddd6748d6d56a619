import { waitTimedOut } from '../step-value.js';
import type { StepKindView } from './types.js';

export const waitView: StepKindView = {
  span: 'waiting',
  until: 'times out',
  printsLogs: false,
  outputLabel: () => 'Output',
  line: (step, at) => {
    const ending = waitTimedOut(step)
      ? ' · timed out'
      : step.status === 'running' && step.until !== null
        ? ` · times out ${at(step.until)}`
        : '';
    return ` · event ${step.eventId ?? '?'}${ending}`;
  },
  row: (step, at) =>
    `event ${step.eventId ?? '?'}${step.status === 'running' && step.until !== null ? ` · times out ${at(step.until)}` : ''}`,
  section: (step, at) => ({
    label: `Waits for event ${step.eventId ?? '?'}${step.until === null ? '' : ` · times out ${at(step.until)}`}`,
  }),
  summary: (step) =>
    step.eventId !== null
      ? `event ${step.eventId}`
      : step.reportedExecutions > 1
        ? `executed ${step.reportedExecutions}×`
        : '',
};
