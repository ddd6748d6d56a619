import type { SerializedError } from '../../../protocol/errors.js';
import { failure } from '../../run-end/end.js';
import type { Change, Run } from '../../store/types.js';
import { openHeaders, type EngineContext, type StoredFollowUp } from '../context.js';
import { parseMessage, type MessageSpec } from '../messages/spec.js';
import type { StoredMessage } from '../messages/store.js';
import { canonicalHeaderName } from './header-case.js';
import { UpstashHeader } from '../headers.js';

/**
 * The messages a delivery's end sends on: the answer of a call to its callback (`context.call`:
 * `Upstash-Callback`), a message that failed for good to its failure callback (a workflow's
 * `failureFunction`: `Upstash-Failure-Callback`). Their bodies are QStash's, as the SDK parses them:
 * `{status, header, body (base64), retried, maxRetries, sourceMessageId, url, method, sourceHeader,
 * sourceBody (base64)…}`, and for a workflow's failure also `workflowRunId`, `workflowCreatedAt`.
 */

export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Headers the answer repeated, each value as sent (the egress gate's `EgressAnswer.repeated`). */
  repeated?: Record<string, string[]>;
  body: Buffer;
}

/** A delivery of a message that ended: what was sent, what came back, how many retries it had taken. */
export interface EndedDelivery {
  message: StoredMessage;
  answer: Answer;
  /** The headers it was sent with (their credentials are redacted in what follows). */
  requestHeaders: Record<string, string>;
  retried: number;
}

/** A run whose message failed for good, and how it fails. */
export interface FailedRun {
  run: Run;
  error: SerializedError;
  /** A failure callback was queued for it (it is then owed, `failureCall: 'message'`). */
  failureCallback: boolean;
  /** Changes committed with the run's end (the delivery's attempt). */
  logged: Change[];
  at: number;
}

const base64 = (value: string | Buffer): string => Buffer.from(value).toString('base64');

/**
 * Headers as QStash reports them: every value a list, every name in Go's canonical case
 * (header-case.ts). A header the answer repeated (two `Set-Cookie`) is a list of its values, as Go's
 * `http.Header` holds it: the SDK hands it to the app as `context.call`'s `header`.
 */
function headerLists(
  headers: Record<string, string>,
  repeated: Record<string, string[]> = {},
): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [canonicalHeaderName(name), repeated[name] ?? [value]]),
  );
}

function sourceFields(context: EngineContext, { message, answer, requestHeaders, retried }: EndedDelivery) {
  // The request's credentials stay out of the follow-up's body: it is stored and logged as it is.
  const { [UpstashHeader.Signature]: _signature, ...sent } = context.credentials.redact(requestHeaders);
  return {
    status: answer.status,
    header: headerLists(answer.headers, answer.repeated),
    body: base64(answer.body),
    retried,
    maxRetries: message.spec.retries,
    sourceMessageId: message.id,
    url: message.spec.destination,
    method: message.spec.method,
    sourceHeader: headerLists(sent),
    sourceBody: base64(message.spec.body),
    topicName: '',
    endpointName: '',
    createdAt: message.createdAt,
  };
}

/** The follow-up message `followUp` describes, with `body`; its headers opened, to be stored (and sealed) again. */
function followUpSpec(context: EngineContext, followUp: StoredFollowUp, body: string): MessageSpec {
  const headers = openHeaders(context.credentials, 'POST', followUp.url, followUp.headers, followUp.sealed);
  return parseMessage(followUp.url, headers, body);
}

/** The callback of a call that ended (answered, or failed for good). */
export function callbackSpec(context: EngineContext, ended: EndedDelivery): MessageSpec | undefined {
  const callback = ended.message.spec.callback;
  if (!callback) return undefined;
  return followUpSpec(context, callback, JSON.stringify(sourceFields(context, ended)));
}

/**
 * The failure callback of a message that failed for good: the message's own, else (a step of a
 * workflow run) the run's, which its first message named.
 */
export function failureSpec(
  context: EngineContext,
  followUp: StoredFollowUp,
  ended: EndedDelivery,
  run: Run | undefined,
): MessageSpec {
  const fields = sourceFields(context, ended);
  const body = run
    ? {
        ...fields,
        sourceBody: base64(run.body),
        workflowRunId: run.id,
        workflowCreatedAt: run.createdAt,
        workflowUrl: run.url,
      }
    : fields;
  return followUpSpec(context, followUp, JSON.stringify(body));
}

/**
 * A run message failed for good: its run fails through run-end, as every run's end does (its
 * steps closed, its alert owed, its failure callback, queued as a message, marked pending), in one
 * commit with `logged` (the delivery's attempt). Its pending messages are dropped and its invoker
 * answered by what follows the end (the engine's listener).
 */
export async function failRun(
  context: EngineContext,
  { run, error, failureCallback, logged, at }: FailedRun,
): Promise<void> {
  const { ends } = context;
  await ends.end(
    run.id,
    failure(run, { error, at, failureCall: failureCallback ? 'message' : false, alerts: ends.alerts }),
    at,
    { extra: logged },
  );
}
