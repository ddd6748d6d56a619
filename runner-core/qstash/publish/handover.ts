import { WorkflowHeader } from '../headers.js';
import type { MessageSpec } from '../messages/spec.js';

/**
 * The unknown-SDK handshake. A run's first delivery may carry `Upstash-Workflow-Unknown-Sdk: true`
 * (a run started by `/v2/trigger` with that header, or a trigger forwarding it): QStash does not
 * know which SDK serves the URL, so the SDK starts the run over itself. It reads the run id from the
 * delivery and re-publishes the first message (`Upstash-Workflow-Init: true`, the same run id, the
 * payload as body) with `Upstash-Workflow-Trigger-By-Sdk: true` and its own headers. That message
 * is not a duplicate of the run's start but its handover: it joins the run as one more delivery,
 * which brings the SDK the run's list as usual (its version header now set), so the first step runs.
 *
 * The handover is a run message of its own call type: delivered to the workflow with the run's list
 * (kind `workflow`), but never an entry of that list (its body is the payload again, not a step);
 * one per run (its deduplication key), so a first delivery sent again is answered `deduplicated`.
 * The unknown-SDK header goes with the run's first delivery only: on every later one the SDK would
 * start the run over again.
 */

export const HANDOVER_CALL_TYPE = 'sdkHandover';

/** A first message the SDK re-published in answer to an unknown-SDK delivery. */
export function isSdkHandover(spec: MessageSpec): boolean {
  return spec.workflow?.init === true && spec.deliverHeaders[WorkflowHeader.TriggerBySdk] === 'true';
}

export function handoverKey(runId: string): string {
  return `handover:${runId}`;
}

/** A run's list as the SDK reads it (delivery bodies, `GET /v2/workflows/runs/:id`): without its handover. */
export function sdkList<T extends { callType: string | null }>(list: readonly T[]): T[] {
  return list.filter((message) => message.callType !== HANDOVER_CALL_TYPE);
}

/** The headers of a delivery that is not the run's first: without the unknown-SDK header. */
export function laterDeliveryHeaders(headers: Record<string, string>): Record<string, string> {
  if (!Object.keys(headers).some((name) => name.toLowerCase() === WorkflowHeader.UnknownSdk)) return headers;
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== WorkflowHeader.UnknownSdk),
  );
}
