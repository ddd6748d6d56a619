import { CliError } from '../errors.js';

/** A bind failure (createRunner's listen) as a one-line CliError; "port in use" says what to do. */
export function listenError(
  error: NodeJS.ErrnoException,
  host: string,
  port: number,
  inUseHint = 'pick another with --port',
): CliError {
  const message =
    error.code === 'EADDRINUSE'
      ? `Port ${port} on ${host} is in use: ${inUseHint}.`
      : `Cannot listen on ${host}:${port}: ${error.message}`;
  return new CliError(1, error.code ?? 'LISTEN', message, { cause: error });
}
