/** An error the CLI reports as one line and an exit code (modeled on CommanderError). */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: number;
  readonly code: string;
  constructor(exitCode: number, code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.exitCode = exitCode;
    this.code = code;
  }
}
