import { watchParent, type ParentWatch } from './parent-watch.js';

/** Where commands write; injected so tests can capture output without touching process streams. */
export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the user asks to stop (Ctrl-C, SIGTERM, SIGHUP); commands that run until stopped await it. */
  interrupted: () => Promise<void>;
  /** Watches the process that started this one (`wf dev` stops with it); absent in tests. */
  watchParent?: () => ParentWatch;
  /** stdout is a terminal, so `wf dev` may draw its dashboard; absent means no (pipes, CI, tests). */
  isTTY?: boolean;
  /** Asks the user a question on the terminal and resolves with the answer; absent where nobody can answer. */
  ask?: (question: string) => Promise<string>;
}

/** What asks a command to stop: Ctrl-C, a process manager's or an IDE's stop, a closed terminal. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Resolves at the first stop signal. The listeners stay: a repeated signal (a wrapper such as
 * `npm run dev`'s starter forwarding, as SIGTERM, the Ctrl-C the terminal sent us too) must not
 * kill the process by Node's default action in the middle of its stop, which would skip the
 * 'exit' handlers that stop `wf dev`'s app. A second SIGINT is the user pressing Ctrl-C again:
 * exit now (the 'exit' handlers still run).
 */
function untilStopSignal(): Promise<void> {
  return new Promise((resolve) => {
    let interrupts = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (signal === 'SIGINT' && ++interrupts > 1) process.exit(130);
      resolve();
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  });
}

export function processIO(): CliIO {
  return {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    env: process.env,
    cwd: process.cwd(),
    isTTY: process.stdout.isTTY === true,
    ...(process.stdin.isTTY === true && { ask: askOnTerminal }),
    interrupted: untilStopSignal,
    watchParent,
  };
}

/** One question on stdin/stdout (`wf bulk`'s confirmation); the readline interface closes after it. */
async function askOnTerminal(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
