import { connect } from 'node:net';

/**
 * HTTP/1.1 at the byte level: what a fuzzer needs and `fetch` refuses to send (bad request lines,
 * NULs, duplicate or broken headers, lying Content-Length, hand-made chunked bodies, slow bodies).
 */

export interface RawAnswer {
  /** Status codes of every response seen, in order (none when the server only closed or reset). */
  statuses: number[];
  /** How the exchange ended. */
  ending: 'closed' | 'reset' | 'answered' | 'timeout';
  /** The first bytes of the answer, for failure messages. */
  head: string;
}

export interface RawOptions {
  /** Give up after this long. @default 5000 */
  timeoutMs?: number;
  /** Written one after another with `gapMs` between them (slow bodies); a Buffer is written at once. */
  gapMs?: number;
}

const STATUS_LINE = /(?:^|\r\n)HTTP\/\d\.\d (\d{3})/g;

/**
 * Sends `parts` to 127.0.0.1:`port` and reads the answer. Resolves once the server closes, or
 * shortly after a response's status line (a keep-alive server would otherwise hold us), or on timeout.
 */
export function sendRaw(port: number, parts: Buffer | readonly Buffer[], options: RawOptions = {}): Promise<RawAnswer> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const chunks = Buffer.isBuffer(parts) ? [parts] : parts;
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    let settled = false;
    let writer: NodeJS.Timeout | undefined;
    let linger: NodeJS.Timeout | undefined;
    const finish = (ending: RawAnswer['ending']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(writer);
      clearTimeout(linger);
      socket.destroy();
      const statuses = [...received.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
      resolve({
        statuses,
        ending: statuses.length > 0 && ending !== 'timeout' ? 'answered' : ending,
        head: received.slice(0, 300),
      });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
      // Answered: wait a moment for the rest (a second pipelined answer), then stop.
      if (!linger && STATUS_LINE.test(received)) linger = setTimeout(() => finish('answered'), 150);
      STATUS_LINE.lastIndex = 0;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNRESET' ? 'reset' : 'closed'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', () => {
      let next = 0;
      const writeNext = (): void => {
        if (settled || next >= chunks.length) return;
        socket.write(chunks[next++]!);
        if (options.gapMs === undefined) writeNext();
        else writer = setTimeout(writeNext, options.gapMs);
      };
      writeNext();
    });
  });
}

/**
 * Streams a chunked body that never ends on its own: `chunkBytes` every `gapMs` until `forMs` have
 * passed, the server answers, or it stops reading. Resolves with the answer and the bytes written.
 */
export function sendEndless(
  port: number,
  head: string,
  chunkBytes: number,
  gapMs: number,
  forMs: number,
): Promise<RawAnswer & { sentBytes: number }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    let sentBytes = 0;
    let settled = false;
    const chunk = Buffer.concat([
      Buffer.from(`${chunkBytes.toString(16)}\r\n`),
      Buffer.alloc(chunkBytes, 0x61),
      Buffer.from('\r\n'),
    ]);
    const finish = (ending: RawAnswer['ending']): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(pump);
      socket.destroy();
      const statuses = [...received.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
      resolve({ statuses, ending: statuses.length > 0 ? 'answered' : ending, head: received.slice(0, 300), sentBytes });
    };
    const timer = setTimeout(() => finish('timeout'), forMs);
    // Written only while the socket drains: a server that stops reading holds the client, not memory.
    const pump = setInterval(() => {
      if (socket.writableNeedDrain || !socket.writable) return;
      socket.write(chunk);
      sentBytes += chunkBytes;
    }, gapMs);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      received += text;
      STATUS_LINE.lastIndex = 0;
      if (STATUS_LINE.test(received)) finish('answered');
      STATUS_LINE.lastIndex = 0;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code === 'ECONNRESET' ? 'reset' : 'closed'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', () => socket.write(head));
  });
}

/** Bytes as a JS string literal (printable ASCII kept, the rest escaped), cut at `max` bytes. */
export function showBytes(bytes: Buffer, max = 400): string {
  const shown = JSON.stringify(bytes.subarray(0, max).toString('latin1'));
  return bytes.length > max ? `${shown} … (${bytes.length} bytes)` : shown;
}
