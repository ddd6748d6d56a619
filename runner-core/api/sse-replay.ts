import type { EventBus, RunnerEvent } from '../commit/events.js';

/** Recent events `GET /v1/events` keeps to replay to a client that reconnects with `Last-Event-ID`. */
export const SSE_REPLAY_EVENTS = 1_000;

/** The kept events' bodies and frames, in bytes, at most (oldest dropped first). */
export const SSE_REPLAY_MAX_BYTES = 8 * 1024 * 1024;

/**
 * How long the ring keeps following the bus after its last stream closed: a client that
 * reconnects within this resumes; later it gets a `reset`. Not forever, because while anything
 * listens the runner reads every committed change back to announce it.
 */
export const SSE_REPLAY_LINGER_MS = 60_000;

export interface ReplayEntry {
  /** The SSE id: rises within a process and across restarts (see `base` below). */
  id: number;
  event: RunnerEvent;
  /** Serialized frames, once some stream needed them (see `sse.ts`). */
  slim?: string;
  whole?: string;
  bytes: number;
}

export interface ReplayRing {
  /** Follows every event (from now on) until the returned function is called. */
  subscribe(listener: (entry: ReplayEntry) => void): () => void;
  /**
   * The kept events after `lastEventId`, oldest first; undefined when the ring cannot tell what
   * came after it (too old, another process's, not a number): the client must read its snapshot.
   */
  after(lastEventId: string): ReplayEntry[] | undefined;
  /** The id of the newest event seen, if any. */
  latestId(): number | undefined;
  /** Keeps a frame serialized for an entry, counting its bytes. */
  remember(entry: ReplayEntry, key: 'slim' | 'whole', text: string): void;
}

export interface ReplayRingOptions {
  replayEvents?: number;
  replayMaxBytes?: number;
  lingerMs?: number;
}

/** Rough size of what an event holds on to: its bodies dominate. */
function eventBytes(event: RunnerEvent): number {
  switch (event.type) {
    case 'run':
      return 512 + event.run.body.length + (event.run.output?.length ?? 0);
    case 'step':
      return 512 + (event.step.output?.length ?? 0);
    case 'attempt':
      return 512 + event.attempt.requestBody.length + (event.attempt.responseBody?.length ?? 0);
  }
}

/**
 * The bounded ring of recent events behind `Last-Event-ID`. It follows the bus while any stream
 * is open (and `lingerMs` after); its continuity starts at the first event it saw since it last
 * started following, so it resumes only ids from there on and answers every other with a reset.
 */
export function createReplayRing(bus: EventBus, options: ReplayRingOptions = {}): ReplayRing {
  const maxEvents = options.replayEvents ?? SSE_REPLAY_EVENTS;
  const maxBytes = options.replayMaxBytes ?? SSE_REPLAY_MAX_BYTES;
  const lingerMs = options.lingerMs ?? SSE_REPLAY_LINGER_MS;
  // Bus ids restart at 1 in every process; on top of the start time (µs-ish), a Last-Event-ID
  // from before a restart is always older than anything this process sends, never mistaken.
  const base = Date.now() * 1000;
  const listeners = new Set<(entry: ReplayEntry) => void>();
  let entries: ReplayEntry[] = [];
  let bytes = 0;
  /** The first id seen since following began: earlier ids may have gaps the ring cannot see. */
  let firstId: number | undefined;
  let stopFollowing: (() => void) | undefined;
  let linger: ReturnType<typeof setTimeout> | undefined;

  const trim = (): void => {
    let drop = 0;
    while (drop < entries.length && (entries.length - drop > maxEvents || bytes > maxBytes))
      bytes -= entries[drop++]!.bytes;
    if (drop > 0) entries = entries.slice(drop);
  };
  const follow = (): void => {
    clearTimeout(linger);
    linger = undefined;
    if (stopFollowing) return;
    entries = [];
    bytes = 0;
    firstId = undefined;
    stopFollowing = bus.subscribe((event, busId) => {
      const entry: ReplayEntry = { id: base + busId, event, bytes: eventBytes(event) };
      firstId ??= entry.id;
      entries.push(entry);
      bytes += entry.bytes;
      trim();
      for (const listener of listeners) listener(entry);
    });
  };
  const unfollowLater = (): void => {
    linger = setTimeout(() => {
      stopFollowing?.();
      stopFollowing = undefined;
      entries = [];
      bytes = 0;
    }, lingerMs);
    linger.unref?.();
  };

  return {
    subscribe(listener) {
      follow();
      listeners.add(listener);
      return () => {
        if (listeners.delete(listener) && listeners.size === 0) unfollowLater();
      };
    },
    after(lastEventId) {
      if (!/^\d{1,16}$/.test(lastEventId.trim())) return undefined;
      const last = Number(lastEventId.trim());
      const latest = entries.at(-1)?.id;
      if (firstId === undefined || latest === undefined) return undefined;
      // Continuity is known from firstId on; the oldest kept entry must directly follow `last`.
      if (last < firstId || last > latest || last < entries[0]!.id - 1) return undefined;
      return entries.filter((entry) => entry.id > last);
    },
    latestId: () => entries.at(-1)?.id,
    remember(entry, key, text) {
      if (entry[key] !== undefined) return;
      entry[key] = text;
      if (entries.at(-1) !== entry && !entries.includes(entry)) return; // already dropped: nothing to count
      entry.bytes += text.length;
      bytes += text.length;
      trim();
    },
  };
}
