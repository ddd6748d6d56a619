import type { NewMessage } from '../../runner-core/qstash/messages/store.js';

/** The instant the QStash message store suites run at. */
export const NOW = 1_800_000_000_000;

/** A plain message due at `NOW` whose body is its id (a run's message with `overrides`). */
export function testMessage(id: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id,
    runId: null,
    callType: null,
    kind: 'plain',
    spec: {
      destination: 'http://127.0.0.1:9/x',
      method: 'POST',
      body: id,
      headers: {},
      retries: 3,
      retryDelay: null,
      timeoutMs: null,
      callback: null,
      failureCallback: null,
      redact: [],
    },
    dueAt: NOW,
    dedupKey: null,
    flow: null,
    now: NOW,
    ...overrides,
  };
}
