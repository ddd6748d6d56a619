// Counts what crosses a node:http server: request and response body bytes, and raw socket bytes.

/** Attaches to `server`; `snapshot()` returns running totals (diff two snapshots for one run). */
export function countBytes(server) {
  const totals = { requests: 0, driveRequests: 0, requestBodyBytes: 0, responseBodyBytes: 0 };
  const open = new Set();
  let closedRead = 0;
  let closedWritten = 0;
  server.on('connection', (socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      closedRead += socket.bytesRead;
      closedWritten += socket.bytesWritten;
    });
  });
  return {
    /** Call from the request listener, in the same tick the request arrives. */
    track(req, res) {
      totals.requests++;
      if (req.headers['wf-signature'] !== undefined) totals.driveRequests++;
      req.on('data', (chunk) => (totals.requestBodyBytes += chunk.length));
      const write = res.write;
      const end = res.end;
      const size = (chunk, encoding) =>
        chunk == null || typeof chunk === 'function'
          ? 0
          : typeof chunk === 'string'
            ? Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding : 'utf8')
            : chunk.byteLength;
      res.write = function (chunk, encoding, cb) {
        totals.responseBodyBytes += size(chunk, encoding);
        return write.call(this, chunk, encoding, cb);
      };
      res.end = function (chunk, encoding, cb) {
        totals.responseBodyBytes += size(chunk, encoding);
        return end.call(this, chunk, encoding, cb);
      };
    },
    snapshot() {
      let read = closedRead;
      let written = closedWritten;
      for (const socket of open) {
        read += socket.bytesRead;
        written += socket.bytesWritten;
      }
      return { ...totals, wireBytesIn: read, wireBytesOut: written };
    },
  };
}

/** `after - before`, field by field. */
export function diffCounts(before, after) {
  const out = {};
  for (const key of Object.keys(after)) out[key] = after[key] - before[key];
  return out;
}
