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
}

export function processIO(): CliIO {
  return {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    env: process.env,
    cwd: process.cwd(),
    isTTY: process.stdout.isTTY === true,
    interrupted: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
  };
}
