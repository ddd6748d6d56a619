// Preloaded (`node --import`, through NODE_OPTIONS) into each process of the start-to-done row: it
// notes when each socket write starts and ends, when each chunk a client reads and each request a
// server parses arrive, and in `wf start` when each
// SQLite BEGIN and COMMIT runs, with absolute times (`performance.timeOrigin + now()`, comparable
// across processes on one machine). At exit the notes go to `$WF_HOPS_DIR/<pid>.json`.
// Diagnostics only: it wraps two methods of net.Socket, http.Server's emit and better-sqlite3's Statement#run.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { join } from 'node:path';

const DIR = process.env.WF_HOPS_DIR;
/** Enough for a few thousand runs; past it nothing more is noted (memory stays bounded). */
const MAX_NOTES = 50_000;
/** A message is told by its first bytes: a request or status line, an answer's run id, an SSE frame's run status. */
const HEAD_CHARS = 2048;

const notes = [];
const now = () => performance.timeOrigin + performance.now();
const note = (at, doneAt, kind, text) => {
  if (notes.length < MAX_NOTES) notes.push([at, doneAt, kind, text]);
};

const textOf = (chunk) => {
  if (typeof chunk === 'string') return chunk.slice(0, HEAD_CHARS);
  return Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, HEAD_CHARS)).toString('latin1');
};
/** `_writeGeneric` gets one chunk, or (writev) a list of `{ chunk }`: the first bytes of them all. */
const headOf = (writev, data) =>
  writev
    ? data
        .map(({ chunk }) => textOf(chunk))
        .join('')
        .slice(0, HEAD_CHARS)
    : textOf(data);

if (DIR) {
  const write = net.Socket.prototype._writeGeneric;
  net.Socket.prototype._writeGeneric = function (writev, data, encoding, callback) {
    const at = now();
    const result = write.call(this, writev, data, encoding, callback);
    note(at, now(), 'write', headOf(writev, data));
    return result;
  };
  // A server's sockets feed its parser without passing through `push`: its requests are noted as
  // they are parsed (their head; a small body comes in the same read), a drive marked `signed`.
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, ...rest) {
    if (event === 'request') {
      const signed = req.headers['wf-signature'] === undefined ? '' : ' signed';
      note(now(), 0, 'request', `${req.method} ${req.url}${signed}`);
    }
    return emit.call(this, event, req, ...rest);
  };
  const push = net.Socket.prototype.push;
  net.Socket.prototype.push = function (chunk, encoding) {
    if (chunk) note(now(), 0, 'read', textOf(chunk));
    return push.call(this, chunk, encoding);
  };
  if (process.argv.some((arg) => arg.endsWith('cli/index.js'))) traceTransactions();
  process.on('exit', writeOut);
}

function writeOut() {
  writeFileSync(join(DIR, `${process.pid}.json`), JSON.stringify({ argv: process.argv, notes }));
}

/**
 * This process's notes, `{ argv, notes: [[at, doneAt, kind, text]] }`, for a process that reads
 * them itself (bench/hops.js, the client): it then writes no file at exit.
 */
export function takeNotes() {
  process.off('exit', writeOut);
  return { argv: process.argv, notes: notes.splice(0) };
}

/** better-sqlite3 runs BEGIN and COMMIT as prepared statements: their `run` is timed (COMMIT's is the fsync). */
function traceTransactions() {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
  probe.close();
  const run = statement.run;
  statement.run = function (...args) {
    if (!this.source.startsWith('BEGIN') && !this.source.startsWith('COMMIT')) return run.apply(this, args);
    const at = now();
    const result = run.apply(this, args);
    note(at, now(), 'sql', this.source);
    return result;
  };
}
