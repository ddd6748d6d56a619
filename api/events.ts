import type { Attempt, Run, Step } from './dto.js';

/** What dashboards and `wf logs` follow: every change, after it is committed. */
export type RunnerEvent =
  | { type: 'run'; run: Run }
  | { type: 'step'; step: Step }
  | { type: 'attempt'; attempt: Attempt };

/**
 * Sent instead of the events a client missed when the runner no longer holds them (its
 * `Last-Event-ID` is older than the runner's replay window, or from before a restart): the
 * client reads its snapshot again. Carries no data of its own.
 */
export interface ResetEvent {
  type: 'reset';
}

/**
 * What `GET /v1/events` sends, and how clients read it. Edge-safe (types and pure functions
 * only): the web dashboard bundles it.
 *
 * By default the stream is slim: a subscriber that stops reading must not make the runner hold
 * every body it would have sent (see `runner-core/api/sse.ts`), and the dashboards need only the bodies of
 * the run that is open, which they read with `GET /v1/runs/:id`. A slim event leaves out the
 * fields below (they are absent from the object, not null) and carries `slim: true`;
 * `GET /v1/events?bodies=1` sends whole events, without `slim`.
 */
export const OMITTED_WHEN_SLIM = {
  run: ['body', 'headers', 'output', 'outputEncoded'],
  step: ['output', 'outputEncoded', 'request'],
  attempt: ['requestHeaders', 'requestBody', 'responseHeaders', 'responseBody'],
} as const;

export type SlimRun = Omit<Run, (typeof OMITTED_WHEN_SLIM.run)[number]>;
export type SlimStep = Omit<Step, (typeof OMITTED_WHEN_SLIM.step)[number]>;
export type SlimAttempt = Omit<Attempt, (typeof OMITTED_WHEN_SLIM.attempt)[number]>;

export type SlimRunnerEvent =
  | { type: 'run'; run: SlimRun; slim: true }
  | { type: 'step'; step: SlimStep; slim: true }
  | { type: 'attempt'; attempt: SlimAttempt; slim: true };

/** One event of `GET /v1/events`: whole (with `?bodies=1`) or slim (the default). */
export type StreamEvent = RunnerEvent | SlimRunnerEvent;

function without<T extends object>(value: T, keys: readonly string[]): T {
  const copy = { ...value } as Record<string, unknown>;
  for (const key of keys) delete copy[key];
  return copy as T;
}

/** The slim form of an event: its bodies left out, `slim: true` added. */
export function slimEvent<E extends RunnerEvent>(event: E): Extract<SlimRunnerEvent, { type: E['type'] }>;
export function slimEvent(event: RunnerEvent): SlimRunnerEvent {
  switch (event.type) {
    case 'run':
      return { type: 'run', run: without(event.run, OMITTED_WHEN_SLIM.run), slim: true };
    case 'step':
      return { type: 'step', step: without(event.step, OMITTED_WHEN_SLIM.step), slim: true };
    case 'attempt':
      return { type: 'attempt', attempt: without(event.attempt, OMITTED_WHEN_SLIM.attempt), slim: true };
  }
}

/** The run an event is about. */
export function eventRunId(event: StreamEvent): string {
  return event.type === 'run' ? event.run.id : event.type === 'step' ? event.step.runId : event.attempt.runId;
}

/** True when the event left its bodies out (the client reads them with `GET /v1/runs/:id`). */
export function isSlim(event: StreamEvent): event is SlimRunnerEvent {
  return 'slim' in event && event.slim === true;
}

/**
 * A run from an event, whole: a slim run keeps the bodies of the copy the client already holds,
 * or gets empty ones (`body: ''`, `headers: {}`, no output) until the run is read.
 */
export function fillRun(known: Run | undefined, incoming: Run | SlimRun): Run {
  return { body: '', headers: {}, outputEncoded: null, ...known, ...incoming } as Run;
}

/** A step from an event, whole: a slim step keeps the known output and `request` (else none). */
export function fillStep(known: Step | undefined, incoming: Step | SlimStep): Step {
  return { outputEncoded: null, request: null, ...known, ...incoming } as Step;
}

/** An attempt from an event, whole: a slim attempt keeps the known bodies and headers (else empty). */
export function fillAttempt(known: Attempt | undefined, incoming: Attempt | SlimAttempt): Attempt {
  return {
    requestHeaders: {},
    requestBody: '',
    responseHeaders: null,
    responseBody: null,
    ...known,
    ...incoming,
  } as Attempt;
}
