import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventBus, RunnerEvent } from '../events.js';

function runIdOf(event: RunnerEvent): string {
  return event.type === 'run' ? event.run.id : event.type === 'step' ? event.step.runId : event.attempt.runId;
}

/** `GET /v1/events[?runId=]`: every runner event as a server-sent event, live. */
export function streamEvents(req: IncomingMessage, res: ServerResponse, bus: EventBus, runId: string | null): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write(': connected\n\n');
  const unsubscribe = bus.subscribe((event) => {
    if (runId && runIdOf(event) !== runId) return;
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  });
  // A comment now and then keeps proxies from closing an idle stream.
  const heartbeat = setInterval(() => res.write(': ping\n\n'), 15_000);
  heartbeat.unref();
  const close = (): void => {
    clearInterval(heartbeat);
    unsubscribe();
  };
  req.on('close', close);
  res.on('error', close);
}
