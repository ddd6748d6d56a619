/** Where commands write; injected so tests can capture output without touching process streams. */
export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the user asks to stop (Ctrl-C); commands that run until stopped await it. */
  interrupted: () => Promise<void>;
  /** stdout is a terminal, so `wf dev` may draw its dashboard; absent means no (pipes, CI, tests). */
  isTTY?: boolean;
  /** Asks the user a question on the terminal and resolves with the answer; absent where nobody can answer. */
  ask?: (question: string) => Promise<string>;
}

export function processIO(): CliIO {
  return {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    env: process.env,
    cwd: process.cwd(),
    isTTY: process.stdout.isTTY === true,
    ...(process.stdin.isTTY === true && { ask: askOnTerminal }),
    interrupted: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
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
