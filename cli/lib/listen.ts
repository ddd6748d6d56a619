import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError } from '../errors.js';

/** Listens, turning "port in use" and other bind failures into one-line CliErrors. */
export function listen(server: Server, host: string, port: number, inUseHint = 'pick another with --port'): Promise<void> {
  return new Promise<void>((done, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const message = error.code === 'EADDRINUSE' ? `Port ${port} on ${host} is in use: ${inUseHint}.` : `Cannot listen on ${host}:${port}: ${error.message}`;
      reject(new CliError(1, error.code ?? 'LISTEN', message, { cause: error }));
    });
    server.listen(port, host, done);
  });
}

/** `http://host:port` of a listening server (IPv6 hosts bracketed). */
export function serverUrl(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
