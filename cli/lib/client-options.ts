import { DEFAULT_RUNNER_URL } from '../../api/runner-url.js';
import { Option, type Command } from 'commander';
import { findClientToken } from './token.js';
import type { CliIO } from './io.js';
import { RunnerClient } from './runner-client.js';

export { DEFAULT_RUNNER_URL };

/** Adds --runner and --token to a command that talks to a runner. */
export function withRunnerOptions(command: Command): Command {
  return command
    .addOption(new Option('--runner <url>', 'runner URL').env('WF_RUNNER_URL').default(DEFAULT_RUNNER_URL))
    .addOption(new Option('--token <token>', 'token for the runner API (default: WF_TOKEN, the env files, .wf/token)'));
}

export function clientFrom(io: CliIO, options: { runner: string; token?: string }): RunnerClient {
  return new RunnerClient(options.runner, findClientToken(io.cwd, io.env, options.token));
}
