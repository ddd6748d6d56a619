import type { IncomingMessage } from 'node:http';

/**
 * Builds a web Request from node's; the body streams through untouched so signatures verify.
 * Used by the node adapter and by h3 v1 (`event.node.req`). Only types come from `node:http`,
 * so this stays edge-safe: it runs wherever the host hands over an IncomingMessage.
 */
export function toRequest(req: IncomingMessage): Request {
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const url = `${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          req.on('data', (chunk: Uint8Array) => controller.enqueue(new Uint8Array(chunk)));
          req.on('end', () => controller.close());
          req.on('error', (error) => controller.error(error));
        },
      })
    : null;
  return new Request(url, { method: req.method, headers, body, duplex: 'half' } as RequestInit);
}
