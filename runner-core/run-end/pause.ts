/**
 * Waits until `at` (by `now`'s clock), or less: until `signal` aborts or `sooner` settles. Never
 * rejects. For a delivery whose next try comes while another delivery of the same run still works.
 */
export async function pauseUntil(
  at: number,
  now: () => number,
  signal: AbortSignal,
  sooner: Promise<unknown>,
): Promise<void> {
  if (signal.aborted) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, at - now()));
        onAbort = resolve;
        signal.addEventListener('abort', onAbort, { once: true });
      }),
      sooner.then(
        () => undefined,
        () => undefined,
      ),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
