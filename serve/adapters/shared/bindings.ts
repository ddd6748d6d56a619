/** Variables a Workers app declares for wfkit (Hono `Bindings`, a Worker's `Env`). */
export interface WorkflowBindings {
  WF_TOKEN: string;
  WF_WORKFLOW_URL?: string;
  WF_RUNNER_URL?: string;
}
