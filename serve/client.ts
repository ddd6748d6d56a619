/**
 * `import { Client } from "wfkit"`: the runner API's one client lives in the contract (api/);
 * the SDK re-exports it with the records it answers.
 */
export {
  Client,
  DEFAULT_RUNNER_URL,
  type ClientOptions,
  type EventsOptions,
  type TriggerOptions,
} from '../api/client.js';
export { ClientError } from '../api/errors.js';
export type { RunDetail } from '../api/parse.js';
export type { RunFilter, RunListQuery } from '../api/run-query.js';
export type { Attempt, Run, RunPage, RunStatus, Step } from '../api/dto.js';
export type { ResetEvent, RunnerEvent, StreamEvent } from '../api/events.js';
