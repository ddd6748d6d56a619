import type { SerializedError } from '../../protocol/errors.js';
import type { Answer } from './follow-ups.js';
import { WorkflowHeader } from './headers.js';
import type { StoredMessage } from './message-store.js';

/**
 * A workflow step delivered to something that is not a workflow endpoint. Every answer of the
 * workflow SDK's `serve` carries `Upstash-Workflow-Sdk-Version` (its protocol version), whatever
 * the outcome; a 2xx without it came from a plain endpoint (a wrong URL, a route that is not
 * `serve`, an SDK older than the protocol), which ran no step and will publish nothing: the run would
 * wait forever. QStash fails the run at once with this error (the text is QStash's, which apps and
 * the SDK's own tests match on); it is not retried, as the same endpoint answers the same way.
 */
export const NON_WORKFLOW_DESTINATION_MESSAGE =
  'detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint';

export function nonWorkflowDestination(message: StoredMessage, answer: Answer): SerializedError | undefined {
  if (message.kind !== 'workflow' || answer.status < 200 || answer.status >= 300) return undefined;
  if (answer.headers[WorkflowHeader.SdkVersion] !== undefined) return undefined;
  return { name: 'NonWorkflowDestinationError', code: 'NON_WORKFLOW_DESTINATION', message: NON_WORKFLOW_DESTINATION_MESSAGE };
}
