import { toInvokeRequest, type InvokeOptions, type InvokeResult } from '../invoke.js';
import type { SuspendTools } from './types.js';

export interface InvokeMethods {
  /**
   * Starts a run of another workflow route (this app or another the runner allows) and waits for
   * it to end, durably: this request ends meanwhile and the runner wakes the run when the child
   * has finished. Never throws for the child's failure: check `isFailed` / `isCanceled`.
   * @example const { body, isFailed } = await context.invoke("resize", { url: "/api/resize", body: { id } });
   */
  invoke<Body = unknown, Payload = any>(name: string, options: InvokeOptions<Payload>): Promise<InvokeResult<Body>>;
}

/** A child workflow run the runner starts and waits for (see ../invoke.ts); a relative url resolves against the workflow's. */
export const invokeMethods = (tools: SuspendTools): InvokeMethods => ({
  invoke: (name, options) => tools.suspend('invoke', name, () => ({ request: toInvokeRequest(name, options, tools.url) })) as never,
});
