import type { Step } from '../../api/dto.js';

/** The spans a step's timeline row draws while the runner holds it (see ../timeline.ts). */
export type SuspendedSpan = 'sleeping' | 'waiting' | 'calling' | 'invoking';

/** A moment as one frontend shows it (its clock, near the time it is read against). */
export type At = (ms: number) => string;

/** The step view's heading for a kind: a label line, then the request's headers and body when it sends one. */
export interface StepSection {
  label: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * How every frontend shows one kind of step: the timeline, the plain lines of `wf logs` and
 * `wf dev --no-tui`, the terminal dashboard's rows and step view, the web dashboard's list. Each
 * frontend keeps its own wording; a kind's wording for all of them lives in its module here.
 */
export interface StepKindView {
  /** The timeline span while the runner holds the step; null for a kind the route executes (its executions are drawn). */
  span: SuspendedSpan | null;
  /** What the step's `until` means while it is under way (a timeline note); null when it has none. */
  until: 'wakes' | 'times out' | null;
  /** True when the route executes the step: it has logs of its own (what its function printed). */
  printsLogs: boolean;
  /** The label of the step's value in the step view ("Output", a call's "Answer 200"). */
  outputLabel(step: Step): string;
  /** The plain line's detail (after the status), starting with " · ", or ''. */
  line(step: Step, at: At): string;
  /** The terminal dashboard's one-line detail of a step row. */
  row(step: Step, at: At): string;
  /** The head of the terminal step view; null when the kind has nothing to say there. */
  section(step: Step, at: At): StepSection | null;
  /** The web dashboard's one-line summary (`relative`: "in 5 min"); '' for nothing. */
  summary(step: Step, at: At, relative: At): string;
}
