import type { RunMessage } from '../messages/store.js';

/** Bytes of run lists the delivery worker keeps between a run's deliveries (message bodies, UTF-16 units). */
export const RUN_LIST_CACHE_BYTES = 8 * 1024 * 1024;

/** What an entry costs beside its body (ids, call type, the object). */
const ENTRY_OVERHEAD = 128;

interface CachedList {
  /** The list holds the run's messages up to this `seq`. */
  upTo: number;
  list: readonly RunMessage[];
  bytes: number;
}

/**
 * A run's list (every message up to the one delivered), kept from one delivery of the run to the
 * next, so a delivery reads only the messages published since: a run of n steps reads n messages,
 * not n²/2. Sound because the part of a run's list up to a `seq` never changes once a message after
 * it exists: messages are numbered in commit order (SQLite has one writer, PostgreSQL numbers them
 * under a per-run lock) and their bodies are never rewritten. Only statuses change, and a delivery
 * looks at its own message's alone, which is always among the rows read fresh (a delivery whose
 * message is not after the cached part, sent again or a parallel branch's, reads the whole list).
 * Bounded by bytes: the least recently read runs go first; a list larger than the bound is not kept.
 */
export class RunListCache {
  readonly #maxBytes: number;
  /** In order of their last read (a Map keeps insertion order). */
  readonly #runs = new Map<string, CachedList>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The run's messages up to `upToSeq`; `read(afterSeq, upToSeq)` reads the store's. */
  async read(
    runId: string,
    upToSeq: number,
    read: (afterSeq: number, upToSeq: number) => Promise<RunMessage[]>,
  ): Promise<RunMessage[]> {
    const cached = this.#runs.get(runId);
    const list =
      cached && cached.upTo < upToSeq
        ? [...cached.list, ...(await read(cached.upTo, upToSeq))]
        : await read(0, upToSeq);
    // Deliveries of one run in parallel: the longest list read is the one kept.
    const current = this.#runs.get(runId);
    if (current === undefined || current.upTo < upToSeq) this.#keep(runId, upToSeq, list);
    return list;
  }

  /** Forgets a run (it ended). */
  drop(runId: string): void {
    const cached = this.#runs.get(runId);
    if (cached === undefined) return;
    this.#runs.delete(runId);
    this.#bytes -= cached.bytes;
  }

  #keep(runId: string, upTo: number, list: readonly RunMessage[]): void {
    this.drop(runId);
    let bytes = 0;
    for (const message of list) bytes += message.body.length + ENTRY_OVERHEAD;
    if (bytes > this.#maxBytes) return;
    for (const [oldest] of this.#runs) {
      if (this.#bytes + bytes <= this.#maxBytes) break;
      this.drop(oldest);
    }
    this.#runs.set(runId, { upTo, list, bytes });
    this.#bytes += bytes;
  }
}
