import type { IncomingMessage, ServerResponse } from 'node:http';

/** True when `pending` settles before the next turn of the event loop (its value is ready now). */
function readyNow(pending: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    pending.then(() => true),
    new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
  ]);
}

/**
 * Writes a web Response to node's, flushing each chunk as it comes (outcome lines stream). The
 * head goes out with the first chunk when that chunk is ready at once (a JSON answer, a drive
 * whose first line came in the same turn): one write, so the reader wakes once, not for the head
 * and again for the body. A stream with nothing yet sends its head alone, at once. A request
 * whose body was refused unread (401, 413) closes its connection after the answer: the rest of
 * the body is not worth draining, and the connection could not carry another request before.
 */
export async function sendResponse(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = Object.fromEntries(response.headers);
  if (!req.complete) headers.connection = 'close';
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  let next = reader.read();
  if (!(await readyNow(next))) res.flushHeaders();
  for (;;) {
    const { done, value } = await next;
    if (done) break;
    res.write(value);
    next = reader.read();
  }
  res.end();
}
