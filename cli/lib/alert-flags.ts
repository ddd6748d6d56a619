import type { AlertOptions } from '../../runner-core/alerts/options.js';

/** `--alert-webhook` and `--public-url`, as `addRunnerFlags` reads them. */
export interface AlertFlags {
  alertWebhook?: string;
  publicUrl?: string;
}

/**
 * The runner's failure alerts from the flags and the environment: the webhook from
 * `--alert-webhook` or `WF_ALERT_WEBHOOK`, the signing secret from `WF_ALERT_SECRET` only (like the
 * tokens, never argv, which other users of the machine can read), the dashboard's address from
 * `--public-url` or `WF_PUBLIC_URL`. Undefined (alerts off) without a webhook. The runner checks
 * the values (a bad one stops `wf start` with a message naming it).
 * @example alertOptions({ alertWebhook: 'https://hooks.slack.com/services/…' }, process.env)
 */
export function alertOptions(flags: AlertFlags, env: NodeJS.ProcessEnv): AlertOptions | undefined {
  const webhookUrl = flags.alertWebhook ?? (env.WF_ALERT_WEBHOOK || undefined);
  if (webhookUrl === undefined) return undefined;
  const options: AlertOptions = { webhookUrl };
  if (env.WF_ALERT_SECRET) options.secret = env.WF_ALERT_SECRET;
  const publicUrl = flags.publicUrl ?? (env.WF_PUBLIC_URL || undefined);
  if (publicUrl !== undefined) options.publicUrl = publicUrl;
  return options;
}
