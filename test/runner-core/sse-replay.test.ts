import { describe, expect, it, vi } from 'vitest';
import { createReplayRing } from '../../runner-core/api/sse-replay.js';
import { EventBus } from '../../runner-core/commit/events.js';
import { makeAttempt } from '../tui/fixtures.js';

/** The ring behind `Last-Event-ID`: what it replays, and when it must answer with a reset. */

const emit = (bus: EventBus, count: number, body = ''): void => {
  for (let i = 0; i < count; i++)
    bus.emit({ type: 'attempt', attempt: { ...makeAttempt(1, i + 1), requestBody: body } });
};

describe('the SSE replay ring', () => {
  it('replays the events after a known id, none twice, and places no id it did not see', () => {
    const bus = new EventBus();
    const ring = createReplayRing(bus, { replayEvents: 5 });
    ring.subscribe(() => {});
    emit(bus, 3);
    const latest = ring.latestId()!;
    // Before the first event the ring heard: what came between is unknown to it.
    expect(ring.after(String(latest - 3))).toBeUndefined();
    expect(ring.after(String(latest - 2))!.map((e) => e.id)).toEqual([latest - 1, latest]);
    expect(ring.after(String(latest))).toEqual([]);
    expect(ring.after(String(latest + 1))).toBeUndefined(); // another process's, or the future
    expect(ring.after('abc')).toBeUndefined();
  });

  it('keeps at most `replayEvents` events and `replayMaxBytes` bytes: older ids get a reset', () => {
    const bus = new EventBus();
    const ring = createReplayRing(bus, { replayEvents: 4, replayMaxBytes: 10_000 });
    ring.subscribe(() => {});
    emit(bus, 6);
    const latest = ring.latestId()!;
    expect(ring.after(String(latest - 4))!.length).toBe(4);
    expect(ring.after(String(latest - 5))).toBeUndefined();
    emit(bus, 3, 'x'.repeat(4_000)); // about 4.5 KB each: two fit
    const now = ring.latestId()!;
    expect(ring.after(String(now - 2))!.length).toBe(2);
    expect(ring.after(String(now - 3))).toBeUndefined();
  });

  it('forgets everything once it stops following the bus, after its last stream closed', async () => {
    const bus = new EventBus();
    const ring = createReplayRing(bus, { lingerMs: 1 });
    const stop = ring.subscribe(() => {});
    emit(bus, 2);
    const seen = ring.latestId()!;
    stop();
    await vi.waitFor(() => expect(bus.size).toBe(0));
    ring.subscribe(() => {});
    emit(bus, 1); // numbered right after `seen`, but what was emitted unheard in between is unknown
    expect(ring.after(String(seen))).toBeUndefined();
  });
});
