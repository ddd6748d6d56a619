import { WorkflowHeader } from '../headers.js';
import { readSdkStep } from '../sdk-steps.js';

/**
 * Which delivery an app was answering when it published a step: the SDK runs one step per
 * delivery and publishes what follows it (a result, a parallel group's plan, a call) before it
 * answers, but names no message in what it publishes. The run and the step do: a parallel branch
 * (`concurrent` > 1) runs during its plan step's delivery (or its call's callback); any other step
 * during the delivery of the run's latest undelivered message, which is what the run's list ended
 * with (the SDK goes on only from the last message of its list).
 *
 * publish.ts settles that delivery in the transaction that stores what it published, so a kill
 * cannot leave a stored result whose delivery is sent (and its step run) again.
 */

/** The step a publish carries: its id, and `concurrent` > 1 inside `Promise.all` (its target for a plan step). */
export interface PublishedStep {
  stepId: number;
  concurrent: number;
}

/** The delivery a publish settles: its run's message in flight that ran `step`. */
export interface DeliveryRef {
  runId: string;
  step: PublishedStep;
}

/**
 * A run's message to the workflow not delivered yet (pending, leased or not: a runner that restarted
 * on its SQLite file dropped the leases of deliveries the app may still be answering), as the store reads it.
 */
export interface InFlightMessage {
  id: string;
  seq: number;
  callType: string | null;
  body: string;
  headers: Record<string, string>;
}

/** The branch a message runs: a plan step's target, or the step of a call whose answer it brings back. */
function branchOf(message: InFlightMessage): number | undefined {
  if (message.callType === 'fromCallback') {
    const stepId = Number(message.headers[WorkflowHeader.StepId]);
    const concurrent = Number(message.headers[WorkflowHeader.Concurrent] ?? '1');
    return Number.isInteger(stepId) && concurrent > 1 ? stepId : undefined;
  }
  if (!message.body.includes('"targetStep"')) return undefined;
  const step = readSdkStep(message.body);
  return step?.stepId === 0 && step.targetStep !== undefined && step.targetStep > 0 ? step.targetStep : undefined;
}

/**
 * The id of the delivery among `inFlight` (one run's) that published `step`; undefined when none
 * is in flight (it ended, or the app published outside a delivery).
 */
export function deliveryInProgress(inFlight: readonly InFlightMessage[], step: PublishedStep): string | undefined {
  const branch = step.stepId > 0 && step.concurrent > 1 ? step.stepId : undefined;
  const own = inFlight.filter((message) => branchOf(message) === branch);
  return own.reduce<InFlightMessage | undefined>(
    (latest, message) => (latest === undefined || message.seq > latest.seq ? message : latest),
    undefined,
  )?.id;
}
