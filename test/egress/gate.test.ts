import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EgressRefusedError } from '../../runner-core/egress/destinations.js';
import { EgressGate } from '../../runner-core/egress/gate.js';
import { isFull, SlotTable, type Slot } from '../../runner-core/egress/slots.js';
import { parseOriginPatterns } from '../../runner-core/egress/origins.js';
import { closeServer } from '../helpers/runner.js';

/** The egress gate against a real node:http server on 127.0.0.1: rules, redirects, caps, slots. */

let server: Server | undefined;
let gate: EgressGate | undefined;
let hits: string[] = [];

afterEach(async () => {
  await gate?.close();
  if (server) await closeServer(server);
  server = undefined;
  gate = undefined;
});

async function serve(handler: (path: string, res: import('node:http').ServerResponse) => void): Promise<number> {
  hits = [];
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

function slot(g: EgressGate, url: URL, purpose: 'call' | 'drive' = 'call'): Slot {
  const s = g.acquire(url, purpose);
  if (isFull(s)) throw new Error('Expected a slot');
  return s;
}

describe('EgressGate', () => {
  it('refuses a drive to an origin that is not allowed before sending anything', async () => {
    const port = await serve((_p, res) => res.end('no'));
    gate = new EgressGate(parseOriginPatterns(['http://localhost:*']));
    const url = new URL(`http://127.0.0.1:${port}/wf`);
    await expect(
      gate.read({ purpose: 'drive', slot: slot(gate, url, 'drive'), url, method: 'POST', headers: {} }, 100),
    ).rejects.toThrow(EgressRefusedError);
    expect(hits).toEqual([]);
  });

  it('refuses a call to a name that resolves to a private address at connect time (no publish-time check needed)', async () => {
    const port = await serve((_p, res) => res.end('secret'));
    gate = new EgressGate(parseOriginPatterns(['http://127.0.0.1:1']));
    const url = new URL(`http://localhost:${port}/admin`);
    const error = await gate
      .read({ purpose: 'call', slot: slot(gate, url), url, method: 'GET', headers: {} }, 100)
      .catch((e: unknown) => e);
    expect(EgressRefusedError.is(error)).toBe(true);
    expect((error as Error).message).toMatch(/localhost resolves to .*not a public address/);
    expect(hits).toEqual([]);
  });

  it('follows no redirect and reads no more of an answer than asked', async () => {
    const port = await serve((path, res) => {
      if (path === '/moved') res.writeHead(302, { location: '/secret' }).end();
      else res.end('x'.repeat(100_000));
    });
    gate = new EgressGate(parseOriginPatterns(['http://127.0.0.1:*']));
    const moved = new URL(`http://127.0.0.1:${port}/moved`);
    const answer = await gate.read(
      { purpose: 'call', slot: slot(gate, moved), url: moved, method: 'GET', headers: {} },
      1_000,
    );
    expect(answer.status).toBe(302);
    expect(hits).toEqual(['/moved']);
    const big = new URL(`http://127.0.0.1:${port}/big`);
    expect(
      (await gate.read({ purpose: 'call', slot: slot(gate, big), url: big, method: 'GET', headers: {} }, 1_000)).body
        .length,
    ).toBe(1_000);
  });

  it('bounds a streamed answer', async () => {
    const port = await serve((_p, res) => res.end('y'.repeat(200_000)));
    gate = new EgressGate(parseOriginPatterns(['http://127.0.0.1:*']), {}, { maxStreamBytes: 50_000 });
    const url = new URL(`http://127.0.0.1:${port}/wf`);
    const response = await gate.stream({
      purpose: 'drive',
      slot: slot(gate, url, 'drive'),
      url,
      method: 'POST',
      headers: {},
      body: '',
    });
    const read = async (): Promise<number> => {
      let n = 0;
      for await (const chunk of response.chunks) n += chunk.byteLength;
      return n;
    };
    await expect(read()).rejects.toThrow(/passed 50000 bytes/);
  });

  it('gives each call origin its share of slots, and says who waits for one', () => {
    gate = new EgressGate(parseOriginPatterns([]), {}, { perOrigin: 2 });
    const slow = new URL('https://slow.example/a');
    const held = [gate.acquire(slow, 'call', 'r1'), gate.acquire(slow, 'call', 'r2')];
    expect(held.every((s) => !isFull(s))).toBe(true);
    const third = gate.acquire(slow, 'call', 'r3');
    expect(isFull(third) && third.reason).toBe('for a slot at https://slow.example: 2 of 2 requests in flight there');
    expect(gate.waitingReason('r3')).toMatch(/^for a slot at https:\/\/slow\.example/);
    // Another origin is not held back, nor are drives to apps (unlimited by default).
    expect(isFull(gate.acquire(new URL('https://fast.example/b'), 'call'))).toBe(false);
    expect(gate.counts().calls).toEqual(
      expect.arrayContaining([{ origin: 'https://slow.example', inFlight: 2, waiting: 1 }]),
    );
    (held[0] as Slot).release();
    expect(isFull(gate.acquire(slow, 'call', 'r3'))).toBe(false);
    expect(gate.waitingReason('r3')).toBeUndefined();
  });

  it('forgets a deferred key that stopped trying (cancelled, taken over), so the table does not grow', () => {
    let now = 0;
    const table = new SlotTable(() => now);
    const held = table.acquire('https://a.example', 1, 'r1') as Slot;
    const full = table.acquire('https://a.example', 1, 'gone');
    expect(isFull(full) && full.newlyWaiting).toBe(true);
    expect(
      isFull(table.acquire('https://a.example', 1, 'gone')) &&
        (table.acquire('https://a.example', 1, 'gone') as { newlyWaiting: boolean }).newlyWaiting,
    ).toBe(false);
    now = 61_000;
    held.release();
    expect(table.counts()).toEqual([]);
    expect(table.waitingReason('gone')).toBeUndefined();
  });
});
