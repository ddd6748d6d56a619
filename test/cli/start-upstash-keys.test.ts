import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Receiver } from '@upstash/qstash';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';

/**
 * `wf start` with QSTASH_CURRENT_SIGNING_KEY / QSTASH_NEXT_SIGNING_KEY signs what it delivers with
 * them: a message published to it reaches a plain HTTP server, whose `Upstash-Signature` the real
 * `@upstash/qstash` Receiver verifies with the same two keys.
 */

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const KEYS = {
  QSTASH_CURRENT_SIGNING_KEY: 'sig_current_for_the_test',
  QSTASH_NEXT_SIGNING_KEY: 'sig_next_for_the_test',
};

async function receiver(): Promise<{
  url: string;
  received: Promise<{ signature: string; body: string; url: string }>;
}> {
  let resolve!: (value: { signature: string; body: string; url: string }) => void;
  const received = new Promise<{ signature: string; body: string; url: string }>((r) => (resolve = r));
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      res.end('ok');
      resolve({
        signature: String(req.headers['upstash-signature'] ?? ''),
        body,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`,
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

async function startWf(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ url: string; out: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'wf-start-keys-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const out: string[] = [];
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  let listening!: (url: string) => void;
  const url = new Promise<string>((r) => (listening = r));
  const io: CliIO = {
    out: (line) => {
      out.push(line);
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) listening(match[1]!);
    },
    err: (line) => void out.push(line),
    env: { WF_TOKEN: 'wf_start_test_token', ...env },
    cwd: dir,
    interrupted: () => stopped,
  };
  const done = createProgram(io)
    .exitOverride()
    .parseAsync(['start', '--port', '0', '--allow-origin', 'http://127.0.0.1:*', ...args], { from: 'user' });
  cleanup.push(async () => {
    stop();
    await done.catch(() => {}); // a refused start was the test's to check
  });
  return {
    url: await Promise.race([url, done.then(() => Promise.reject(new Error(`wf start ended: ${out.join('\n')}`)))]),
    out,
  };
}

describe('wf start and the Upstash signing keys', () => {
  it('signs deliveries with the keys of its environment, which the real Receiver verifies', {
    timeout: 30_000,
  }, async () => {
    const { url, out } = await startWf(KEYS);
    expect(out.join('\n')).toContain('upstashSigningKeys=from QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY');
    const hook = await receiver();
    const published = await fetch(`${url}/v2/publish/${hook.url}`, {
      method: 'POST',
      headers: { authorization: 'Bearer wf_start_test_token' },
      body: 'hello',
    });
    expect(published.status).toBe(201);
    const delivery = await hook.received;
    expect(delivery.body).toBe('hello');
    const verify = (current: string, next: string) =>
      new Receiver({ currentSigningKey: current, nextSigningKey: next }).verify({
        signature: delivery.signature,
        body: delivery.body,
        url: delivery.url,
      });
    expect(await verify(KEYS.QSTASH_CURRENT_SIGNING_KEY, KEYS.QSTASH_NEXT_SIGNING_KEY)).toBe(true);
    // And only with them: other keys do not verify it.
    await expect(verify('sig_other', 'sig_other_next')).rejects.toThrow();
  });

  it('refuses to start with one key alone', async () => {
    await expect(startWf({ QSTASH_CURRENT_SIGNING_KEY: 'sig_a' })).rejects.toThrow(/QSTASH_NEXT_SIGNING_KEY/);
  });
});
