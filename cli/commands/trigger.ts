import { Command } from 'commander';
import { CliError } from '../errors.js';
import type { CliIO } from '../lib/io.js';
import { collectHeader, parseJsonText } from '../lib/parse.js';

/** `wf trigger <url>`: starts a run the way any client would, by POSTing to the app's route. */
export function makeTriggerCommand(io: CliIO): Command {
  return new Command('trigger')
    .description("start a run by POSTing to the workflow route's URL")
    .argument('<url>', 'the workflow route, e.g. http://localhost:3000/workflow')
    .option('-d, --data <json>', 'JSON payload', parseJsonText)
    .option('-H, --header <header>', 'extra header "Name: value" (repeatable)', collectHeader, {})
    .option('--idempotency-key <key>', 'start at most one run for this key')
    .action(
      async (url: string, options: { data?: string; header: Record<string, string>; idempotencyKey?: string }) => {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...options.header };
        if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
        let response: Response;
        try {
          response = await fetch(url, { method: 'POST', headers, body: options.data ?? '{}' });
        } catch (error) {
          throw new CliError(1, 'UNREACHABLE', `Cannot reach ${url}: is the app running?`, { cause: error });
        }
        const text = await response.text();
        if (!response.ok)
          throw new CliError(1, `HTTP_${response.status}`, `${url} answered ${response.status}: ${text.slice(0, 500)}`);
        let runId: unknown;
        try {
          runId = (JSON.parse(text) as { workflowRunId?: unknown }).workflowRunId;
        } catch {}
        if (typeof runId !== 'string')
          throw new CliError(
            1,
            'NOT_A_WORKFLOW',
            `${url} answered 200 but not with a workflowRunId: ${text.slice(0, 200)}`,
          );
        io.out(runId);
      },
    );
}
