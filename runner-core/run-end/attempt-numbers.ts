import type { Run, RunPatch } from '../store/types.js';

/** Takes the next attempt number of an Upstash-protocol run from its QStash engine's counter (`MessageStore.nextAttemptSeq`). */
export type UpstashAttemptSeq = (runId: string, now: number) => Promise<number>;

/**
 * The attempt numbers (`Attempt.seq`) of a finished run's deliveries, which run side by side: each
 * try takes the next number before it is sent, and every commit writes the highest number taken so
 * far (`attempts`), so the counter never goes back whichever delivery commits first. An Upstash
 * run's numbers come from its engine's counter instead, which may number a failure callback's
 * delivery at the same moment (and already counts what it hands out).
 */
export class AttemptNumbers {
  private taken: number;

  private readonly now: () => number;

  private readonly upstash: UpstashAttemptSeq | undefined;

  constructor(run: Pick<Run, 'attempts' | 'protocol'>, now: () => number, upstash?: UpstashAttemptSeq) {
    this.now = now;
    this.taken = run.attempts;
    this.upstash = run.protocol === 'upstash' ? upstash : undefined;
  }

  /** The number of the next try. */
  async take(runId: string): Promise<number> {
    if (this.upstash) return this.upstash(runId, this.now());
    this.taken += 1;
    return this.taken;
  }

  /** `patch` with the run's attempt counter as it stands now (nothing for an engine-numbered run). */
  counted(patch: RunPatch): RunPatch {
    const { attempts: _own, ...rest } = patch;
    return this.upstash ? rest : { ...rest, attempts: this.taken };
  }
}
