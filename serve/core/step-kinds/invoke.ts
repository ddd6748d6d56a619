import { WorkflowError } from '../../../protocol/errors.js';
import { resolveFlowControl, type FlowControlOptions } from '../../../protocol/flow-control.js';
import type { InvokeRequest } from '../../../protocol/messages.js';
import { checkRetries, encodeBody } from './request-options.js';
import type { SuspendTools } from './types.js';

/** What `context.invoke` starts: another workflow route, on this app or another one the runner allows. */
export interface InvokeOptions<Payload = any> {
  /** The child workflow's route: absolute, or relative to this workflow's URL (`/api/child`). */
  url: string;
  /** The child's payload (its `requestPayload`): a string is sent as is; anything else as JSON. */
  body?: Payload;
  headers?: Record<string, string>;
  /** The child's retries per step. @default the runner's */
  retries?: number;
  /**
   * Flow control of the child run, as `serve`'s option: a `key` function gets the child's `body`
   * (the value given here), evaluated once, when the invoke is made.
   */
  flowControl?: FlowControlOptions<Payload>;
}

/** What `context.invoke` resolves with once the child ended. */
export interface InvokeResult<Body = unknown> {
  /** The child's return value; its serialized error when it failed; undefined when cancelled. */
  body: Body;
  isFailed: boolean;
  isCanceled: boolean;
}

/** The invoke step's request, checked here so a bad option fails the run in the route, naming the step. */
export function toInvokeRequest(name: string, options: InvokeOptions, base: string | undefined): InvokeRequest {
  const where = `invoke "${name}"`;
  if (typeof options !== 'object' || options === null)
    throw new WorkflowError(
      'CONFIG',
      `Expected the options of ${where} to be an object with a \`url\`, got ${JSON.stringify(options)}.`,
    );
  let url: URL;
  try {
    url = new URL(options.url, base);
  } catch {
    throw new WorkflowError(
      'CONFIG',
      `Expected \`url\` of ${where} to be a URL (absolute, or relative to this workflow's), got ${JSON.stringify(options.url)}.`,
    );
  }
  const headers: Record<string, string> = { ...options.headers };
  const body = options.body === undefined ? '' : encodeBody(options.body, headers);
  const request: InvokeRequest = { url: url.href, body, headers };
  if (options.retries !== undefined) request.retries = checkRetries(options.retries, where);
  if (options.flowControl !== undefined) {
    try {
      request.flowControl = resolveFlowControl(options.flowControl, options.body);
    } catch (error) {
      throw new WorkflowError(
        'CONFIG',
        `Expected \`flowControl\` of ${where} to be valid flow control: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return request;
}

export interface InvokeMethods {
  /**
   * Starts a run of another workflow route (this app or another the runner allows) and waits for
   * it to end, durably: this request ends meanwhile and the runner wakes the run when the child
   * has finished. Never throws for the child's failure: check `isFailed` / `isCanceled`.
   * @example const { body, isFailed } = await context.invoke("resize", { url: "/api/resize", body: { id } });
   */
  invoke<Body = unknown, Payload = any>(name: string, options: InvokeOptions<Payload>): Promise<InvokeResult<Body>>;
}

/** A child workflow run the runner starts and waits for (`toInvokeRequest`); a relative url resolves against the workflow's. */
export const invokeMethods = (tools: SuspendTools): InvokeMethods => ({
  invoke: (name, options) =>
    tools.suspend('invoke', name, () => ({ request: toInvokeRequest(name, options, tools.url) })) as never,
});
