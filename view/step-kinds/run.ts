import type { StepKindView } from './types.js';

/** A step the route executes: its detail is its failure, or how often it ran. */
export const runView: StepKindView = {
  span: null,
  until: null,
  printsLogs: true,
  outputLabel: () => 'Output',
  line: () => '',
  row: (step) => (step.error && step.status !== 'succeeded' ? step.error.message : ''),
  section: () => null,
  summary: (step) => (step.reportedExecutions > 1 ? `executed ${step.reportedExecutions}×` : ''),
};
