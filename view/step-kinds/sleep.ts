import type { StepKindView } from './types.js';

export const sleepView: StepKindView = {
  span: 'sleeping',
  until: 'wakes',
  printsLogs: false,
  outputLabel: () => 'Output',
  line: (step, at) => (step.until === null ? '' : ` · until ${at(step.until)}`),
  row: (step, at) => (step.until === null ? '' : `wakes ${at(step.until)}`),
  section: (step, at) => (step.until === null ? null : { label: `Sleeps until ${at(step.until)}` }),
  summary: (step, at, relative) => {
    if (step.until === null) return step.reportedExecutions > 1 ? `executed ${step.reportedExecutions}×` : '';
    return step.finishedAt === null
      ? `wakes ${at(step.until)} (${relative(step.until)})`
      : `woke ${at(step.finishedAt)}`;
  },
};
