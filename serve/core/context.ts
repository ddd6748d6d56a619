import type { DriveSession } from './session.js';

/** What a workflow function receives. `Payload` types the start body; `Env` the host's variables. */
export interface WorkflowContext<Payload = unknown, Env = Record<string, unknown>> {
  /** `wfr_…`, the id the start request answered with. */
  readonly workflowRunId: string;
  /** The JSON body the run was started with (`undefined` for an empty body). */
  readonly requestPayload: Payload;
  /** Headers of the start request, credentials redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** The host's variables (process.env, Workers bindings, the `env` option). */
  readonly env: Env;
  /** The public URL the runner calls for this workflow. */
  readonly url: string;
  /**
   * A durable step: `fn` runs once, its result is stored by the runner, and on every later
   * replay `run` answers from that result without calling `fn`. `name` must be stable.
   * @example const user = await context.run("load-user", () => db.users.get(id));
   */
  run<T>(name: string, fn: () => T | Promise<T>): Promise<Awaited<T>>;
}

export type Workflow<Payload = unknown, Env = Record<string, unknown>> = (
  context: WorkflowContext<Payload, Env>,
) => unknown;

export interface ContextInit {
  workflowRunId: string;
  requestPayload: unknown;
  headers: Record<string, string>;
  env: Record<string, unknown>;
  url: string;
}

export function createContext(init: ContextInit, session: DriveSession): WorkflowContext<unknown, Record<string, unknown>> {
  return {
    ...init,
    run: (name, fn) => session.run(name, fn),
  };
}
