import { serializeError, type SerializedError } from '../../protocol/errors.js';
import { postToEndpoint } from '../drive/dispatch.js';
import type { EgressGate } from '../egress/gate.js';
import { isFull } from '../egress/slots.js';
import { parseRetryAfter } from '../drive/retry.js';
import type { Attempt, Run, Step } from '../store/types.js';
import { alertDocument } from './document.js';
import type { AlertConfig } from './options.js';
import { ALERT_ID_HEADER, ALERT_SIGNATURE_HEADER, alertSignature } from './signature.js';

export interface AlertContext {
  /** The alert goes out through the egress gate (an operator-set destination: exempt from allowed origins). */
  egress: EgressGate;
  now: () => number;
  /** Redacts credential headers (the runner's list) from what the run's log keeps of the answer. */
  redact: (headers: Record<string, string>) => Record<string, string>;
  config: AlertConfig;
}

/** One delivery of a run's alert: its entry in the run's log, and whether the receiver took it. */
export interface AlertDelivery {
  attempt: Attempt;
  delivered: boolean;
  /** A 429/503 saying when to come back. */
  retryAfterMs?: number;
}

/** What the log keeps of an answer: enough to see why a receiver refused, never its whole body. */
const RESPONSE_KEEP_BYTES = 4_096;
/** An alert is one small POST: a receiver that has not answered in this long is treated as down. */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The webhook as the run's log shows it: origin and path hidden, since a Slack incoming webhook's
 * path is its secret and the log is read by everyone who can open the dashboard.
 * @example shownWebhook(new URL('https://hooks.slack.com/services/T0/B0/xyz')) // 'https://hooks.slack.com/…'
 */
export function shownWebhook(url: URL): string {
  return url.pathname === '/' && url.search === '' ? url.origin : `${url.origin}/…`;
}

function alertError(name: string, message: string): SerializedError {
  return { name, message, code: 'ALERT_NOT_DELIVERED' };
}

/**
 * POSTs the run's alert, signed, to the webhook. Never throws: every problem is an undelivered
 * attempt with its error. Redirects are not followed (a 3xx is not a delivery: the configured
 * URL is the only place the document goes), and at most `RESPONSE_KEEP_BYTES` of the answer are
 * read and kept before the connection is let go.
 */
export async function sendAlert(
  ctx: AlertContext,
  run: Run,
  steps: readonly Step[],
  signal: AbortSignal,
): Promise<AlertDelivery> {
  const { config, now } = ctx;
  const startedAt = now();
  const document = alertDocument(run, steps, config.publicUrl);
  const body = JSON.stringify(document);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'wfkit-runner',
    [ALERT_ID_HEADER]: document.id,
    [ALERT_SIGNATURE_HEADER]: alertSignature(body, config.secret, Math.floor(startedAt / 1000)),
  };
  const attempt: Attempt = {
    runId: run.id,
    seq: run.attempts + 1,
    startedAt,
    durationMs: 0,
    requestUrl: shownWebhook(config.webhook),
    requestHeaders: ctx.redact(headers),
    requestBody: body,
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    outcome: 'alert error',
    error: null,
  };
  const finish = (delivery: Omit<AlertDelivery, 'attempt'>, error?: SerializedError): AlertDelivery => {
    attempt.durationMs = now() - startedAt;
    attempt.outcome = delivery.delivered ? 'alert delivered' : 'alert error';
    attempt.error = error ?? null;
    return { attempt, ...delivery };
  };
  // Alerts are never limited per origin: the slot is always there, and counted for /metrics.
  const slot = ctx.egress.acquire(config.webhook, 'alert');
  try {
    if (isFull(slot)) throw new Error(`no slot at ${slot.origin}`);
    const response = await postToEndpoint(ctx.egress, {
      purpose: 'alert',
      slot,
      url: config.webhook.href,
      headers,
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)]),
    });
    attempt.responseStatus = response.status;
    attempt.responseHeaders = ctx.redact(response.headers);
    let text = '';
    try {
      // Leaving the loop early ends the body's stream: the rest is never read.
      for await (const chunk of response.chunks) {
        text += Buffer.from(chunk).toString('utf8');
        if (text.length >= RESPONSE_KEEP_BYTES) break;
      }
    } catch {
      // The status decides; a body that broke off (or outlived the timeout) is only the log's loss.
      text += '\n… [the answer broke off]';
    }
    attempt.responseBody =
      text.length > RESPONSE_KEEP_BYTES ? `${text.slice(0, RESPONSE_KEEP_BYTES)}\n… [not kept]` : text;
    if (response.status >= 200 && response.status < 300) return finish({ delivered: true });
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], now());
    const why =
      response.status >= 300 && response.status < 400
        ? `redirected to ${response.headers.location ?? 'nowhere'}; redirects are not followed, set the final URL`
        : `${text.slice(0, 300) || 'no body'}`;
    const error = alertError(
      'AlertWebhookError',
      `The alert webhook answered ${response.status}, expected 2xx: ${why}`,
    );
    return finish({ delivered: false, ...(retryAfterMs !== undefined && { retryAfterMs }) }, error);
  } catch (error) {
    const cause = serializeError(error);
    return finish(
      { delivered: false },
      alertError(cause.name, `The alert webhook at ${shownWebhook(config.webhook)} did not answer: ${cause.message}`),
    );
  } finally {
    if (!isFull(slot)) slot.release();
  }
}

/**
 * A pending alert this runner cannot send (it has no webhook: another runner on the same database
 * has one, or the option was dropped before a restart): given up, and logged as such.
 */
export function unsentAlert(run: Run, now: number): Attempt {
  return {
    runId: run.id,
    seq: run.attempts + 1,
    startedAt: now,
    durationMs: 0,
    requestUrl: '(no alert webhook)',
    requestHeaders: {},
    requestBody: '',
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    outcome: 'alert failed',
    error: alertError(
      'AlertNotConfiguredError',
      'The runner that claimed this run has no alert webhook (--alert-webhook, WF_ALERT_WEBHOOK): every runner sharing a database should be configured alike.',
    ),
  };
}
