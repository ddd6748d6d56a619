import { stepChild } from '../links.js';
import type { StepKindView } from './types.js';

export const invokeView: StepKindView = {
  span: 'invoking',
  until: null,
  printsLogs: false,
  outputLabel: () => 'Output',
  line: (step) => {
    const child = stepChild(step);
    return `${child ? ` · child ${child}` : ' · child not started yet'}${step.request ? ` · ${step.request.url}` : ''}`;
  },
  row: (step) => {
    const child = stepChild(step);
    return child
      ? `child ${child}`
      : step.error && step.status !== 'succeeded'
        ? step.error.message
        : 'child not started yet';
  },
  section: (step) => {
    const child = stepChild(step);
    return { label: `Child run  ${child ?? '(not started yet)'}${step.request ? ` · POST ${step.request.url}` : ''}` };
  },
  summary: (step) => (step.reportedExecutions > 1 ? `executed ${step.reportedExecutions}×` : ''),
};
