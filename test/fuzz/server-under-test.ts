import { join } from 'node:path';
import { expect } from 'vitest';
import { mib, sampleMemory, type MemorySampler } from '../helpers/process-memory.js';
import { spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { sendEndless, sendRaw } from './raw-http.js';

/**
 * What every fuzz file asserts about the process it attacks: a case is answered below 500 (or the
 * connection closed), the process is alive afterwards, and its resident memory stayed bounded.
 */

/**
 * Headroom over the process's resident memory before the attack. The most a correct server holds
 * at once here is one capped body per connection in flight (8 connections × at most the 8 MiB drive
 * cap of a signed request, 1 MiB elsewhere) plus V8's heap growth under thousands of requests
 * (tens of MiB before a major GC). A server that buffers an endless or over-limit body instead of
 * refusing it exceeds this within a second: the endless-body test offers it hundreds of MiB.
 */
export const RSS_HEADROOM_BYTES = 160 * 1024 * 1024;

/**
 * More headroom where bodies up to the QStash message cap (10 MiB, as QStash's paid plans) are
 * accepted and read whole: the runner reads them one or two at a time (its byte budgets), but
 * each leaves its chunks, its joined buffer and its text behind, and V8 collects such garbage only
 * once about 64 MiB of it has built up (later still on a busy machine: the QStash fuzz peaked at
 * 183–195 MiB over its start with both cores saturated beside it). A server that buffers bodies
 * without bound still exceeds this within a second (the endless-body tests offer hundreds of MiB).
 */
export const QSTASH_BODY_HEADROOM_BYTES = 96 * 1024 * 1024;

export interface ProcessUnderTest {
  pid: number;
  port: number;
  running: () => boolean;
  /** stdout and stderr so far: the stack of a crash. */
  output: () => string;
}

/** Samples the process's memory until `stop`, then asserts the bound. */
export function watchMemory(
  server: ProcessUnderTest,
  headroomBytes = RSS_HEADROOM_BYTES,
): {
  sampler: MemorySampler;
  summary: () => string;
  assertBounded: (what: string) => void;
} {
  const sampler = sampleMemory(server.pid);
  return {
    sampler,
    summary: () => `RSS ${mib(sampler.baseline)} → peak ${mib(sampler.peak())}`,
    assertBounded(what) {
      sampler.stop();
      const growth = sampler.peak() - sampler.baseline;
      expect(
        growth,
        `${what}: resident memory grew from ${mib(sampler.baseline)} to a peak of ${mib(sampler.peak())}`,
      ).toBeLessThan(headroomBytes);
    },
  };
}

/** The process is up a moment later (a crash's exit takes that long to show); else the failure has its stack. */
export async function expectAlive(server: ProcessUnderTest, after: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(server.running(), `the process exited after ${after}; its output ends:\n${server.output().slice(-3000)}`).toBe(
    true,
  );
}

/** One raw request: answered below 500 (or closed without an answer), and the process still up. */
export async function expectNo5xx(
  server: ProcessUnderTest,
  raw: string | Buffer,
  timeoutMs = 4_000,
): Promise<number[]> {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'latin1');
  const answer = await sendRaw(server.port, bytes, { timeoutMs });
  const shown = JSON.stringify(bytes.subarray(0, 200).toString('latin1'));
  expect(
    answer.statuses.filter((s) => s >= 500),
    `${shown} was answered: ${JSON.stringify(answer.head)}`,
  ).toEqual([]);
  await expectAlive(server, shown);
  return answer.statuses;
}

/** A body sent one byte per 100 ms (bounded: `bytes` of them): answered, never a 5xx. */
export async function expectSlowBodyAnswered(server: ProcessUnderTest, head: string, body: string): Promise<void> {
  const parts = [
    Buffer.from(`${head}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`, 'latin1'),
    ...[...body].map((ch) => Buffer.from(ch, 'latin1')),
  ];
  const answer = await sendRaw(server.port, parts, { gapMs: 100, timeoutMs: body.length * 100 + 5_000 });
  expect(answer.statuses.length, `slow body ${JSON.stringify(body)}: ${answer.ending}`).toBeGreaterThan(0);
  expect(
    answer.statuses.filter((s) => s >= 500),
    `slow body answered ${answer.head}`,
  ).toEqual([]);
}

/**
 * Bodies that never end, `connections` at once for `forMs`: each pushes 256 KiB chunks as fast as
 * the server reads them, beside 20 that trickle a byte per 100 ms. The server must refuse them at its cap (413) or stop reading; buffering
 * them shows in its memory.
 */
export async function offerEndlessBodies(
  server: ProcessUnderTest,
  head: string,
  connections: number,
  forMs: number,
): Promise<{ statuses: number[]; sentBytes: number }> {
  const fullHead = `${head}Transfer-Encoding: chunked\r\n\r\n`;
  const answers = await Promise.all([
    ...Array.from({ length: connections }, () => sendEndless(server.port, fullHead, 256 * 1024, 5, forMs)),
    // And trickles: a byte every 100 ms on 20 more connections, never finishing within `forMs`.
    ...Array.from({ length: 20 }, () => sendEndless(server.port, fullHead, 1, 100, forMs)),
  ]);
  return { statuses: answers.flatMap((a) => a.statuses), sentBytes: answers.reduce((sum, a) => sum + a.sentBytes, 0) };
}

/**
 * `wf start` on SQLite in `dir` with `token`, as a process under test: `current()` is the running
 * one, started again when an earlier case killed it (so one crash does not hide the next).
 */
export function restartableRunner(
  dir: () => string,
  token: string,
): { current: () => Promise<ProcessUnderTest>; kill: () => Promise<void> } {
  const started: WfStartProcess[] = [];
  const underTest = (p: WfStartProcess): ProcessUnderTest => ({
    pid: p.child.pid!,
    port: Number(new URL(p.url).port),
    running: p.running,
    output: () => `${p.stdout()}\n${p.stderr()}`,
  });
  return {
    async current() {
      const last = started.at(-1);
      if (last?.running()) return underTest(last);
      const p = await spawnWfStart(
        ['--database', join(dir(), 'runner.db'), '--log-format', 'json'],
        { WF_TOKENS: token, WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*' },
        dir(),
      );
      started.push(p);
      return underTest(p);
    },
    async kill() {
      for (const p of started) if (p.running()) p.child.kill('SIGKILL');
      await Promise.all(started.map((p) => p.exited));
    },
  };
}
