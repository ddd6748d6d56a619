import { sdkList } from '../publish/handover.js';
import type { RunMessage } from '../messages/store.js';

/**
 * A run's list as the SDK reads it (`[{messageId, body: base64, callType}, …]`), the payload first:
 * inline in a delivery's body while it is small, else fetched by the SDK (`GET /v2/workflows/runs/:id`).
 * Bodies go up to `UpstashLimits.maxMessageBytes` each, and a run may hold many: the list is sized
 * before it is built, and served entry by entry, so it is never held whole besides its bodies.
 */

function entry(message: RunMessage): string {
  return JSON.stringify({
    messageId: message.id,
    body: Buffer.from(message.body).toString('base64'),
    callType: message.callType ?? 'step',
  });
}

/** An entry's size, at most (JSON punctuation and names: 41 bytes; ids and call types are ASCII). */
function entryBytes(message: RunMessage): number {
  return 48 + message.id.length + (message.callType?.length ?? 4) + Math.ceil(Buffer.byteLength(message.body) / 3) * 4;
}

/** The delivery body: the list as JSON, or '' (the SDK fetches it) when it would pass `limitBytes`. */
export function inlineListBody(list: readonly RunMessage[], limitBytes: number): string {
  const entries = sdkList(list);
  let size = 2;
  for (const message of entries) {
    size += entryBytes(message);
    if (size > limitBytes) return '';
  }
  return `[${entries.map(entry).join(',')}]`;
}

/** The list as a response body, one entry encoded at a time. */
export function listStream(list: readonly RunMessage[]): ReadableStream<Uint8Array> {
  const entries = sdkList(list);
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next === entries.length) {
        controller.enqueue(encoder.encode(next === 0 ? '[]' : ']'));
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(`${next === 0 ? '[' : ','}${entry(entries[next]!)}`));
      next++;
    },
  });
}
