import type { LogFields, Logger } from '../../runner-core/telemetry/logger.js';
import type { CliIO } from './io.js';

export type LogFormat = 'text' | 'json';

export type { LogFields, Logger };

/**
 * `wf start`'s log: `text` lines for people (`wf start: listening on … (store=postgres, …)`), or
 * `json` lines for log shippers, one object per line: `{"time","level","msg",…fields}`.
 * Info goes to stdout, warnings and errors to stderr.
 *
 * @example
 * createLogger('json', io).info('listening', { url: 'http://127.0.0.1:7766' });
 */
export function createLogger(
  logFormat: LogFormat,
  io: Pick<CliIO, 'out' | 'err'>,
  now: () => Date = () => new Date(),
): Logger {
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
