import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { startServer, type Endpoint } from './endpoint.js';

/** One `GET /v1/events` that went through the proxy. */
export interface EventRequest {
  /** The request target, `/v1/events?…`. */
  url: string;
  /** Its `Last-Event-ID` header, when it resumed. */
  lastEventId: string | undefined;
}

export interface CuttingProxy extends Endpoint {
  /** Drops every event stream open through the proxy now (as a runner restart or a slow reader's cut would). */
  cut: () => void;
  /** The event stream requests so far, in order. */
  eventRequests: EventRequest[];
}

/** A proxy in front of the runner whose `cut()` drops the event streams open through it. */
export async function cuttingProxy(target: string): Promise<CuttingProxy> {
  const streams = new Set<ServerResponse>();
  const eventRequests: EventRequest[] = [];
  const endpoint = await startServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/v1/events')) {
      eventRequests.push({ url: req.url, lastEventId: [req.headers['last-event-id']].flat()[0] });
      streams.add(res);
    }
    const upstream = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => (upstream.destroy(), streams.delete(res)));
    req.pipe(upstream);
  });
  const cut = (): void => {
    for (const res of [...streams]) res.destroy();
  };
  return { ...endpoint, eventRequests, cut };
}
