import type { RunMessage } from '../messages/store.js';
import { parseJsonObject, readSdkStep } from '../sdk-steps.js';

/**
 * `context.createWebhook` / `context.waitForWebhook`, the QStash side. The SDK makes the webhook
 * itself: its `CreateWebhook` step's result, which it publishes like any step's, is
 * `{webhookUrl: "<QSTASH_URL>/v2/workflows/hooks/<userId>/<runId>/<eventId>", eventId}` with a fresh
 * `evt_` + 15 random characters (about 89 bits). `waitForWebhook` is a wait on that event id
 * (`POST /v2/wait/:eventId`, step type `WaitForWebhook`). A request to the URL is the event: its
 * data is the request as JSON (`{proto, host, url, method, header, body}`, the body in base64),
 * which the SDK turns back into a `Request` whose `url` is the webhook URL. A call before the wait
 * is kept for the run's next wait, as a notify with a run id is (the lookback the SDK documents).
 *
 * A URL is served only when the run's own `CreateWebhook` result names it exactly, path and all:
 * nobody can make one up, and a guess costs one 404 per try.
 */

export const HOOKS_PATH = '/workflows/hooks/';

/** Where a webhook request points: the parts of `/v2/workflows/hooks/<userId>/<runId>/<eventId>`. */
export interface HookAddress {
  userId: string;
  runId: string;
  eventId: string;
}

/** Path parts longer than this are no webhook (the SDK's are tens of characters). */
const MAX_PART_LENGTH = 200;

/** The address in a request path under the `/v2` app (`/workflows/hooks/u/r/e`); undefined when it is none. */
export function parseHookPath(pathname: string): HookAddress | undefined {
  if (!pathname.startsWith(HOOKS_PATH)) return undefined;
  const parts = pathname.slice(HOOKS_PATH.length).split('/');
  if (parts.length !== 3 || parts.some((part) => part === '' || part.length > MAX_PART_LENGTH)) return undefined;
  const [userId, runId, eventId] = parts as [string, string, string];
  return { userId, runId, eventId };
}

/**
 * The webhook URL the run's `CreateWebhook` result gave for `eventId`, from the run's messages;
 * undefined when the run made no such webhook.
 */
export function createdWebhookUrl(messages: readonly RunMessage[], eventId: string): string | undefined {
  for (const message of messages) {
    const step = readSdkStep(message.body);
    if (step?.stepType !== 'CreateWebhook' || typeof step.out !== 'string') continue;
    const out = parseJsonObject(step.out) as { webhookUrl?: unknown; eventId?: unknown } | undefined;
    if (out?.eventId === eventId && typeof out.webhookUrl === 'string') return out.webhookUrl;
  }
  return undefined;
}

/**
 * True when `webhookUrl` (what the SDK made) ends in `address`: the runner may sit behind a proxy
 * that adds a path prefix (`QSTASH_URL=https://host/qstash`), so only the hook's own part counts.
 */
export function namesAddress(webhookUrl: string, address: HookAddress): boolean {
  let pathname: string;
  try {
    pathname = new URL(webhookUrl).pathname;
  } catch {
    return false;
  }
  const at = pathname.lastIndexOf(`/v2${HOOKS_PATH}`);
  const made = at < 0 ? undefined : parseHookPath(pathname.slice(at + 3));
  if (made === undefined) return false;
  return made.userId === address.userId && made.runId === address.runId && made.eventId === address.eventId;
}

/**
 * The request as the event data `waitForWebhook` reads. Its URL is the webhook URL the SDK made
 * (plus the request's query), so the app sees the URL it handed out even behind a proxy.
 */
export function webhookEventData(webhookUrl: string, request: Request, body: string): string {
  const made = new URL(webhookUrl);
  const header: Record<string, string[]> = {};
  for (const [name, value] of request.headers) (header[name] ??= []).push(value);
  return JSON.stringify({
    proto: made.protocol.slice(0, -1),
    host: made.host,
    url: made.pathname + new URL(request.url).search,
    method: request.method,
    header,
    body: Buffer.from(body, 'utf8').toString('base64'),
  });
}
