/**
 * The QStash and Upstash Workflow header names the runner reads and writes, lower case (the form
 * messages/spec.ts reads them in; HTTP header names are case-insensitive). One place, so a name the
 * SDK spells two ways (`Upstash-Workflow-Runid`, `-RunId`) is compared in one form everywhere.
 */

/** QStash's own headers: how a message is delivered, and what a delivery carries. */
export const UpstashHeader = {
  Method: 'upstash-method',
  Delay: 'upstash-delay',
  NotBefore: 'upstash-not-before',
  Retries: 'upstash-retries',
  RetryDelay: 'upstash-retry-delay',
  Timeout: 'upstash-timeout',
  Callback: 'upstash-callback',
  FailureCallback: 'upstash-failure-callback',
  Label: 'upstash-label',
  FeatureSet: 'upstash-feature-set',
  FlowControlKey: 'upstash-flow-control-key',
  FlowControlValue: 'upstash-flow-control-value',
  DeduplicationId: 'upstash-deduplication-id',
  ContentBasedDeduplication: 'upstash-content-based-deduplication',
  RedactFields: 'upstash-redact-fields',
  /** Set on every delivery. */
  MessageId: 'upstash-message-id',
  Retried: 'upstash-retried',
  Signature: 'upstash-signature',
  /** An answer's: the failure is final (with status 489). */
  NonRetryableError: 'upstash-nonretryable-error',
} as const;

/** The workflow SDK's headers (on a message, and forwarded to the workflow). */
export const WorkflowHeader = {
  RunId: 'upstash-workflow-runid',
  Init: 'upstash-workflow-init',
  Url: 'upstash-workflow-url',
  CallType: 'upstash-workflow-calltype',
  /** `true` on a first message `context.invoke` publishes: its body names the invoker (invoke.ts). */
  Invoke: 'upstash-workflow-invoke',
  CreatedAt: 'upstash-workflow-createdat',
  SdkVersion: 'upstash-workflow-sdk-version',
  /** An answer's: the SDK's own version (`v1.3.2`), besides the protocol's (`SdkVersion`). */
  Sdk: 'upstash-workflow-sdk',
  StepId: 'upstash-workflow-stepid',
  StepName: 'upstash-workflow-stepname',
  StepType: 'upstash-workflow-steptype',
  Concurrent: 'upstash-workflow-concurrent',
  IsFailure: 'upstash-workflow-is-failure',
  FailureCallback: 'upstash-workflow-failure-callback',
  /** An answer's: the route has no failureFunction. */
  FailureCallbackNotFound: 'upstash-workflow-failure-callback-notfound',
  /** On a run's first delivery only: "start the run again yourself" (the SDK answers with a handover, handover.ts). */
  UnknownSdk: 'upstash-workflow-unknown-sdk',
  /** On that re-published first message (handover.ts). */
  TriggerBySdk: 'upstash-workflow-trigger-by-sdk',
} as const;

/** Prefixes of header families: forwarded to the destination, or the headers of a follow-up message. */
export const HeaderPrefix = {
  Upstash: 'upstash-',
  Forward: 'upstash-forward-',
  Workflow: 'upstash-workflow-',
  Telemetry: 'upstash-telemetry-',
  Callback: 'upstash-callback-',
  FailureCallback: 'upstash-failure-callback-',
} as const;

/** `name` as a message's header that the destination receives as `name` (`Upstash-Forward-<name>`). */
export function forwardedHeader(name: string): string {
  return `${HeaderPrefix.Forward}${name}`;
}

/** `name` as QStash's documentation spells it, for messages: `upstash-retry-delay` → `Upstash-Retry-Delay`. */
export function displayName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}
