import { WorkflowError } from '../../protocol/errors.js';

/** Races a step against its timeout; the timer never outlives the step. */
export async function withTimeout<T>(work: T | Promise<T>, timeoutMs: number | undefined, name: string): Promise<T> {
  if (timeoutMs === undefined) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new WorkflowError('TIMEOUT', `Step "${name}" took longer than its timeout of ${timeoutMs} ms.`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
