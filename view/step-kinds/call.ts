import { callAnswer } from '../step-value.js';
import type { StepKindView } from './types.js';

export const callView: StepKindView = {
  span: 'calling',
  until: null,
  printsLogs: false,
  outputLabel: (step) => `Answer  ${callAnswer(step)?.status ?? ''}`.trimEnd(),
  line: (step) => {
    const answer = step.status === 'succeeded' ? callAnswer(step) : undefined;
    return step.request
      ? ` · ${step.request.method} ${step.request.url}${answer?.status ? ` → ${answer.status}` : ''}`
      : '';
  },
  row: (step) => {
    const status = callAnswer(step)?.status;
    return step.request
      ? `${step.request.method} ${step.request.url}${status === undefined ? '' : ` → ${status}`}`
      : 'call';
  },
  section: (step) => {
    const r = step.request;
    if (!r) return null;
    return {
      label: `HTTP call  ${r.method} ${r.url}`,
      headers: r.headers,
      ...(r.body !== undefined && { body: r.body }),
    };
  },
  summary: (step) =>
    step.request
      ? `${step.request.method} ${step.request.url}`
      : step.reportedExecutions > 1
        ? `executed ${step.reportedExecutions}×`
        : '',
};
