import type { Step as StepDto } from '../../api/dto.js';
import type { StartRequest } from '../../protocol/messages.js';
import type { SuspendingStepKind, SuspensionOf } from '../../protocol/step-kinds/index.js';
import type { CallCredentials } from '../drive/call-credentials.js';
import type { EgressGate } from '../egress/gate.js';
import type { Change, Run, Step, Store } from '../store/types.js';
import type { Tracing } from '../telemetry/tracing.js';

/** What resolving a run's pending steps may use (suspensions.ts builds it for the driver). */
export interface ResolveContext {
  store: Store;
  /** Every call goes out through the gate, in a slot at its target's origin. */
  egress: EgressGate;
  now: () => number;
  commit: (changes: Change[]) => Promise<void>;
  /** Opens the calls' sealed credentials, and redacts the answers' before they are stored. */
  credentials: CallCredentials;
  /** Starts a child run through the normal start path (allowed origins, idempotency key). */
  startRun: (request: StartRequest) => Promise<{ run: Run }>;
  /** A run whose call was deferred for want of a slot at its target's origin (told once per wait). */
  onWaitingForSlot?: ((runIds: string[]) => void) | undefined;
  /** When traces are exported: a call carries its step span's `traceparent` (unless the app set one). */
  tracing?: Tracing | undefined;
}

/** The step row's columns a suspension is stored in (see store/types.ts `step-suspended`). */
export type StoredSuspension = Pick<Extract<Change, { type: 'step-suspended' }>, 'until' | 'eventId' | 'request'>;

/**
 * Where one pending step stands after a resolution: `resolved` with the change that records its end
 * (succeeded or failed), or still `pending` until `wakeAt` (null: only a notify or a wake wakes it),
 * parking the run as `status` (`waiting` when anything waits on the outside world, else `sleeping`).
 */
export type Resolution =
  | { t: 'resolved'; change: Change }
  | { t: 'pending'; wakeAt: number | null; status: 'sleeping' | 'waiting' };

/**
 * How the runner handles one kind of suspending step: the hooks settle.ts, suspensions.ts, the
 * driver and the API's DTO mapping call instead of branching on the kind.
 */
export interface RunnerStepKind<K extends SuspendingStepKind> {
  /** The columns the route's suspension is stored in (settle.ts, on a `suspend` line). */
  stored(suspension: SuspensionOf<K>): StoredSuspension;
  /**
   * Whether the stored step holds what resolving it needs: the route registers a step with its
   * `started` line and describes it with the `suspend` line, which a failure may have cut off.
   */
  described(step: Step): boolean;
  /**
   * Resolves what it can of this kind's pending steps (all of one run), one resolution per step in
   * order; `aborted` when the drive was aborted meanwhile and nothing is to be committed.
   */
  resolve(
    ctx: ResolveContext,
    run: Run,
    steps: readonly Step[],
    signal: AbortSignal,
  ): Promise<Resolution[] | 'aborted'>;
  /**
   * Whether something that resolves the step happened without waking the run (the driver re-checks
   * after parking it): e.g. an invoked child that ended. A notify needs none: it resolves the wait.
   */
  endedMeanwhile(store: Store, step: Step): Promise<boolean>;
  /** What the API's step record adds for this kind (api/dto.ts `Step`), e.g. an invoke's child run. */
  dto(step: Step): Partial<StepDto>;
}
