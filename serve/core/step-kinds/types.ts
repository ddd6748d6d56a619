import type { SuspendingStepKind, SuspensionFields } from '../../../protocol/step-kinds/index.js';

/** What a suspending kind's context methods get from the drive session (see session.ts). */
export interface SuspendTools {
  /**
   * Claims the next position for a `kind` step: on replay its recorded value (or error); else the
   * fields `describe` returns go to the runner in the `suspend` line (a throw fails the run), and
   * the promise never settles in this request.
   */
  suspend<K extends SuspendingStepKind>(kind: K, name: string, describe: () => SuspensionFields[K]): Promise<unknown>;
  /** The session's wall clock (epoch ms): sleeps and timeouts count from it. */
  clock(): number;
  /** The workflow's public URL: a relative invoke URL resolves against it. */
  url: string;
}
