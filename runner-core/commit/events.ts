import { publicStep } from '../drive/call-credentials.js';
import { consoleLogger, describeError, type Logger } from '../telemetry/logger.js';
import type { Attempt, Run, Step } from '../store/types.js';

/**
 * Every change, after it is committed, as the runner's records: the API edge maps them to the
 * contract's events (`api/events.ts`) before they leave the process.
 */
export type RunnerEvent =
  | { type: 'run'; run: Run }
  | { type: 'step'; step: Step }
  | { type: 'attempt'; attempt: Attempt };

/** `id` rises with every event this process emits: what `GET /v1/events` sends as `id:`. */
export type RunnerEventListener = (event: RunnerEvent, id: number) => void;

/** A minimal typed event bus; listeners that throw are isolated from the runner. */
export class EventBus {
  private readonly listeners = new Set<RunnerEventListener>();
  private lastId = 0;
  private readonly logger: Logger;
  constructor(logger: Logger = consoleLogger) {
    this.logger = logger;
  }
  subscribe(listener: RunnerEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  get size(): number {
    return this.listeners.size;
  }
  /** Events `emitSoon` holds, in order. */
  private soon: RunnerEvent[] = [];

  /**
   * Emits `event` at the next check phase, or at the next `emit`, whichever comes first, so the
   * bus keeps its order. For an event that need not go out before what the caller does next: a
   * started run's event waits until its drive request is written (undici writes it from an
   * immediate queued before this one), so the SSE write, and the listener it wakes, come after.
   */
  emitSoon(event: RunnerEvent): void {
    if (this.soon.push(event) === 1) setImmediate(() => this.flushSoon());
  }

  private flushSoon(): void {
    const events = this.soon;
    this.soon = [];
    for (const event of events) this.deliver(event);
  }

  emit(emitted: RunnerEvent): void {
    if (this.soon.length > 0) this.flushSoon();
    this.deliver(emitted);
  }

  private deliver(emitted: RunnerEvent): void {
    // Events leave the runner (SSE, dashboards): a call's sealed credentials never go with them.
    // Most steps have none (publicStep returns the same object): then the event itself goes out, no copy.
    let event = emitted;
    if (emitted.type === 'step') {
      const step = publicStep(emitted.step);
      if (step !== emitted.step) event = { type: 'step', step };
    }
    const id = ++this.lastId;
    for (const listener of this.listeners) {
      try {
        listener(event, id);
      } catch (error) {
        this.logger.error(`event listener failed: ${describeError(error)}`);
      }
    }
  }
}
