import { connect, type Socket } from 'node:net';

/**
 * HTTP/1.1 by hand over `net.connect`, for what fetch will not send: forged Host headers, bodies
 * larger than they say, bodies that stall, and uploads that stop the moment the answer arrives
 * (so a test can tell how much of a body the server took before answering).
 */

export interface RawAnswer {
  status: number;
  /** The whole answer as text (head and body). */
  text: string;
  /** Body bytes flushed to the socket before the answer arrived (or before `limit`); at most that much reached the server. */
  written: number;
  socket: Socket;
}

/** Connects to the port of `url` on 127.0.0.1. */
export async function rawConnect(url: string): Promise<Socket> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  // The server may reset a connection whose body it refused; the test reads what arrived.
  socket.on('error', () => {});
  return socket;
}

/** True once `text` holds a whole response: its head and a body of its Content-Length, or a finished chunked body. */
function isComplete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) return Buffer.byteLength(text.slice(end + 4)) >= Number(length[1]);
  if (head.includes('transfer-encoding: chunked')) return text.endsWith('0\r\n\r\n');
  return false;
}

export interface SendOptions {
  /** Frame the body as chunked transfer encoding (the head must say so). */
  chunked?: boolean;
  /** Stop writing after this many body bytes. */
  limit: number;
  /** @default 64 KiB */
  chunkSize?: number;
  /** Give up waiting for the server after this long. @default 15000 */
  timeoutMs?: number;
}

/**
 * Writes `head` (request line and headers, ending with the blank line), then body bytes as fast as
 * the server takes them, until its answer starts or `limit` is reached; then waits for the whole
 * answer (or the connection's end). Backpressure is honoured: a server that reads nothing gets
 * only what the socket buffers hold.
 */
export async function sendUntilAnswered(url: string, head: string, options: SendOptions): Promise<RawAnswer> {
  const socket = await rawConnect(url);
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let text = '';
  let wake: (() => void) | undefined;
  const poke = (): void => wake?.();
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    poke();
  });
  socket.on('drain', poke);
  socket.on('close', poke);
  const waitFor = async (done: () => boolean): Promise<void> => {
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `No answer from ${url} within the time allowed; got so far: ${JSON.stringify(text.slice(0, 200))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  };
  const answered = (): boolean => text.includes('\r\n\r\n') || socket.destroyed;
  socket.write(head);
  const size = options.chunkSize ?? 64 * 1024;
  const payload = Buffer.alloc(size, 'a');
  const frame = options.chunked
    ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), payload, Buffer.from('\r\n')])
    : payload;
  let written = 0;
  while (!answered() && written < options.limit) {
    const flowing = socket.write(frame);
    written += size;
    if (!flowing) await waitFor(() => answered() || socket.writableLength === 0);
  }
  const flushed = written - socket.writableLength;
  await waitFor(() => isComplete(text) || socket.destroyed);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, written: flushed, socket };
}

/** The body of a raw answer, de-chunked when it came chunked. */
export function answerBody(text: string): string {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end).toLowerCase();
  let rest = text.slice(end + 4);
  if (!head.includes('transfer-encoding: chunked')) return rest;
  let body = '';
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return body;
    body += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
