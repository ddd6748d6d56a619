/**
 * Failure alerts: when a run fails, the runner POSTs one signed JSON document about it to an
 * operator's webhook (a Slack incoming webhook, an error tracker, an on-call tool), retried
 * durably until delivered. What a `Runner` is told (`RunnerOptions.alerts`).
 */
export interface AlertOptions {
  /** Where each failed run's alert is POSTed (`--alert-webhook`, `WF_ALERT_WEBHOOK`): an http(s) URL. */
  webhookUrl: string;
  /**
   * The HMAC-SHA256 key of the `wf-alert-signature` header (`WF_ALERT_SECRET`).
   * @default the runner's signing token (the first of `tokens`), which the apps verifying drive requests already hold
   */
  secret?: string;
  /**
   * The dashboard's address as people reach it (`--public-url`), for the run's link in the alert.
   * @default `createRunner`'s listen URL; without either, the alert carries no link
   */
  publicUrl?: string;
}

/** Alert options checked and completed: what the driver reads. */
export interface AlertConfig {
  webhook: URL;
  secret: string;
  /** Without a trailing slash; undefined when nothing said where the dashboard is. */
  publicUrl: string | undefined;
}

/** The webhook or public URL as an http(s) URL, or a message naming the option and what came. */
export function httpUrl(text: string, option: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`Expected ${option} to be an http(s) URL, got "${text}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`Expected ${option} to be an http(s) URL, got the scheme "${url.protocol}" in "${text}".`);
  return url;
}

/**
 * Checks the options once, when the runner is made (a bad URL is a configuration error, not a
 * failed delivery hours later).
 * @example alertConfig({ webhookUrl: 'https://hooks.slack.com/services/T/B/x' }, ['wf_token']).webhook.host // 'hooks.slack.com'
 */
export function alertConfig(options: AlertOptions, signingToken: string): AlertConfig {
  const webhook = httpUrl(options.webhookUrl, 'the alert webhook (--alert-webhook, WF_ALERT_WEBHOOK)');
  if (options.secret !== undefined && options.secret.length < 16) {
    throw new Error(
      `Expected the alert secret (WF_ALERT_SECRET) to be at least 16 characters, got ${options.secret.length}.`,
    );
  }
  const config: AlertConfig = { webhook, secret: options.secret ?? signingToken, publicUrl: undefined };
  if (options.publicUrl !== undefined) setPublicUrl(config, options.publicUrl);
  return config;
}

/** Sets where the dashboard is (createRunner does, with its listen URL, when nothing else said). */
export function setPublicUrl(config: AlertConfig, text: string): void {
  config.publicUrl = httpUrl(text, 'the public URL (--public-url, WF_PUBLIC_URL)').href.replace(/\/+$/, '');
}
