import { format } from 'node:util';
import type { CliIO } from './io.js';

export type LogFormat = 'text' | 'json';
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * `wf start`'s log: `text` lines for people (`wf start: listening on … (store=postgres, …)`), or
 * `json` lines for log shippers, one object per line: `{"time","level","msg",…fields}`.
 * Info goes to stdout, warnings and errors to stderr.
 *
 * @example
 * createLogger('json', io).info('listening', { url: 'http://127.0.0.1:7766' });
 */
export function createLogger(logFormat: LogFormat, io: Pick<CliIO, 'out' | 'err'>, now: () => Date = () => new Date()): Logger {
  const write = (level: 'info' | 'warn' | 'error', message: string, fields: LogFields = {}): void => {
    const line =
      logFormat === 'json'
        ? JSON.stringify({ time: now().toISOString(), level, msg: message, ...fields })
        : `wf start: ${level === 'info' ? '' : `${level}: `}${message}${textFields(fields)}`;
    (level === 'info' ? io.out : io.err)(line);
  };
  return {
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

function textFields(fields: LogFields): string {
  const parts = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/**
 * Sends what the runner prints through `console` (a failed drive, a lost lease, a failed poll) to
 * `log`, so a `--log-format json` log has only JSON lines. Returns the function that undoes it.
 */
export function routeConsole(log: Logger): () => void {
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  const to = (level: keyof Logger) => (...args: unknown[]): void => log[level](format(...args).replace(/^\[wfkit\] /, ''));
  console.log = to('info');
  console.info = to('info');
  console.warn = to('warn');
  console.error = to('error');
  return () => Object.assign(console, saved);
}
