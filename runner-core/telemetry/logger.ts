/** A log line's structured details (`runId`, `owner`, …); shippers index them, people read them. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/**
 * Where runner-core reports what it cannot throw to anyone: a failed drive, a lost lease, a failed
 * poll or commit. Injected (`RunnerOptions.logger`, `createRunner({ logger })`) so an embedder or
 * `wf start --log-format json` gets every line in its own format, without patching `console`.
 */
export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** The default: `console`, each line prefixed `[wfkit]`, fields appended as JSON. */
export const consoleLogger: Logger = {
  info: (message, fields) => console.info(line(message, fields)),
  warn: (message, fields) => console.warn(line(message, fields)),
  error: (message, fields) => console.error(line(message, fields)),
};

function line(message: string, fields: LogFields | undefined): string {
  const shown =
    fields && Object.values(fields).some((value) => value !== undefined) ? ` ${JSON.stringify(fields)}` : '';
  return `[wfkit] ${message}${shown}`;
}

/** An error's message for a log line (with its stack's first frame where there is one). */
export function describeError(error: unknown): string {
  if (error instanceof Error)
    return error.stack?.split('\n').slice(0, 2).join(' ') ?? `${error.name}: ${error.message}`;
  return String(error);
}
