import type { SerializedError } from '../../../protocol/errors.js';
import type { Answer } from './follow-ups.js';
import { WorkflowHeader } from '../headers.js';
import type { StoredMessage } from '../messages/store.js';

/**
 * A workflow step delivered to something that is not a workflow endpoint. Every answer of the
 * workflow SDK's `serve` carries `Upstash-Workflow-Sdk-Version` (its protocol version) and
 * `Upstash-Workflow-Sdk` (its own version, `v1.3.2`), whatever the outcome; a 2xx without them came
 * from a plain endpoint (a wrong URL, a route that is not `serve`, an old SDK), which ran no step and
 * will publish nothing: the run would wait forever. QStash fails the run at once, not retried (the
 * same endpoint answers the same way), with one of two errors (their text is QStash's; apps and the
 * SDK's own tests match on it): a run the SDK started needs the protocol header; a run started by
 * `POST /v2/trigger` needs an SDK of v1 or later, which only the SDK's version header tells.
 */
export const NON_WORKFLOW_DESTINATION_MESSAGE =
  'detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint';
export const TRIGGER_NEEDS_SDK_V1_MESSAGE =
  'trigger rest api is only usable with sdk versions after v1.0.0 major version';

/** `Upstash-Workflow-Sdk`, the SDK's own version (`v1.3.2`): major 1 or later. */
function sdkV1OrLater(version: string | undefined): boolean {
  const major = /^v?(\d+)\./.exec(version ?? '')?.[1];
  return major !== undefined && Number(major) >= 1;
}

export function nonWorkflowDestination(
  message: StoredMessage,
  answer: Answer,
  restTrigger: boolean,
): SerializedError | undefined {
  if (message.kind !== 'workflow' || answer.status < 200 || answer.status >= 300) return undefined;
  if (restTrigger && !sdkV1OrLater(answer.headers[WorkflowHeader.Sdk])) {
    return {
      name: 'NonWorkflowDestinationError',
      code: 'NON_WORKFLOW_DESTINATION',
      message: TRIGGER_NEEDS_SDK_V1_MESSAGE,
    };
  }
  if (answer.headers[WorkflowHeader.SdkVersion] !== undefined) return undefined;
  return {
    name: 'NonWorkflowDestinationError',
    code: 'NON_WORKFLOW_DESTINATION',
    message: NON_WORKFLOW_DESTINATION_MESSAGE,
  };
}
