import { fstatSync } from 'node:fs';

/**
 * How often the parent's pid is compared. A process manager, an IDE's stop button or a CI timeout
 * may SIGKILL the process that started `wf dev` (or kill its parent, which forwards nothing): no
 * signal reaches us then, and the ports stay taken until we notice. Half a second costs nothing.
 */
const POLL_MS = 500;

export interface ParentWatch {
  /** Resolves, with why, once the process that started this one is gone. Never for an orphan from the start. */
  gone: Promise<string>;
  stop(): void;
}

/** stdin is a pipe or a socket someone holds open: its end means the holder exited (not so for a terminal, /dev/null or a file). */
function stdinIsPipe(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Watches for the death of the process that started this one, however it died: our parent pid
 * changes (we were adopted by init or a subreaper), or the pipe we were given as stdin closes
 * (whoever held it exited, even further up, e.g. the tool that ran `npm run dev`). Started
 * already adopted (parent pid 1: a daemon, a container's init) there is nothing to watch.
 * Timers and stdin are unref'd: the watch never keeps the process alive by itself.
 *
 * @example const parent = watchParent(); await Promise.race([interrupted, parent.gone]);
 */
export function watchParent(options: { pollMs?: number; stdin?: boolean } = {}): ParentWatch {
  const first = process.ppid;
  let settle: (reason: string) => void = () => {};
  const gone = new Promise<string>((resolve) => (settle = resolve));
  if (first === 1) return { gone, stop: () => {} };
  const timer = setInterval(() => {
    if (process.ppid !== first) settle(`its parent process (pid ${first}) is gone`);
  }, options.pollMs ?? POLL_MS);
  timer.unref();
  const watchStdin = (options.stdin ?? true) && stdinIsPipe();
  const onEnd = (): void => settle('its stdin was closed (whoever started it is gone)');
  if (watchStdin) {
    // Read and drop: nothing reads stdin when it is not a terminal, and 'end' comes only to a reader.
    process.stdin.on('data', () => {});
    process.stdin.once('end', onEnd);
    (process.stdin as unknown as { unref?: () => void }).unref?.();
  }
  return {
    gone,
    stop() {
      clearInterval(timer);
      if (watchStdin) {
        process.stdin.off('end', onEnd);
        process.stdin.pause();
      }
    },
  };
}
