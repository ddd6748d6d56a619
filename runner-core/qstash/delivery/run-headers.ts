import { WorkflowHeader } from '../headers.js';
import type { StoredMessage } from '../messages/store.js';

/**
 * Which of a run's forwarded headers (its first message's `Upstash-Forward-*`: the user's headers
 * and the SDK's version) a delivery of the run carries, as QStash sends them:
 *
 * - a step (`kind` workflow: a result, a plan step, a wait's end, an invoked child's result): all;
 * - a call's answer (`fromCallback`): the user's, without the SDK's version header, whose presence
 *   would make the SDK read the callback's body as a step list (its first-invocation test);
 * - a call's target (`toCallback`) and the failure callback (which has its own): none here.
 *
 * Undefined when the delivery carries none; else the filter to apply to the run's headers.
 */
export function runHeadersFor(
  kind: StoredMessage['kind'],
  callType: string | null,
): ((forwarded: Record<string, string>) => Record<string, string>) | undefined {
  if (kind === 'workflow') return (forwarded) => forwarded;
  if (callType !== 'fromCallback') return undefined;
  const userOnly = ([name]: [string, string]): boolean => name.toLowerCase() !== WorkflowHeader.SdkVersion;
  return (forwarded) => Object.fromEntries(Object.entries(forwarded).filter(userOnly));
}
