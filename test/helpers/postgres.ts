import { spawn, type SpawnOptions } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throw-away PostgreSQL cluster for tests and the bench: `initdb` into a temp folder, started on
 * 127.0.0.1 and a free port (server defaults kept, fsync included), stopped and removed by `stop()`.
 *
 * Uses Debian's server binaries (/usr/lib/postgresql/<version>/bin). Installing them is the tests'
 * global setup's job (test/setup/system-deps.ts lists every system program the suites drive), so
 * this helper never installs. PostgreSQL refuses to run as root, so as root every server command
 * runs as the `postgres` OS user (`runuser`), which owns the temp folder.
 *
 * This file is plain, erasable TypeScript without relative imports, so `bench/run.js` can import it
 * through Node's type stripping.
 */

export interface PostgresCluster {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` of the database made at start. */
  url: string;
  /** Creates another empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs one SQL statement in `database` through psql (no client library needed); returns its output. */
  psql(sql: string, database?: string): Promise<string>;
  /** Where the server's log is, for failure messages. */
  logFile: string;
  /** `pg_ctl stop -m fast`, then removes the folder. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Name of the database to create. @default 'wfkit' */
  database?: string;
  /** Ignored: kept so older callers type-check; the tests' global setup installs PostgreSQL. */
  install?: boolean;
}

interface Result {
  code: number | null;
  output: string;
}

/** Spawns and resolves on exit (not on close: a daemon may inherit the pipes and hold them open). */
function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

async function runOrThrow(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<string> {
  const { code, output } = await run(command, args, options);
  if (code !== 0) throw new Error(`\`${command} ${args.join(' ')}\` exited ${code}:\n${output.trim()}`);
  return output;
}

/** Where Debian puts each PostgreSQL version's server binaries (`<base>/<version>/bin`). */
export const POSTGRES_BASE = '/usr/lib/postgresql';

/** The newest Debian server bin folder that has initdb and pg_ctl, or undefined. */
export function findPostgresBin(base = POSTGRES_BASE): string | undefined {
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(base, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** A free TCP port on 127.0.0.1 (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string')
    throw new Error('Expected a TCP address from a listening server.');
  return address.port;
}

/** True when PostgreSQL's server binaries are installed here. */
export function canRunPostgres(): boolean {
  return findPostgresBin() !== undefined;
}

/**
 * Starts a throw-away cluster and creates one database in it.
 *
 * @example
 * const pg = await startPostgres();
 * const store = await openStore(pg.url);
 * // …
 * await pg.stop();
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  if (!bin) {
    // The message with the install command is the global setup's (test/setup/system-deps.ts): it
    // stops a run before this point, so only a caller outside vitest (the bench) gets here.
    throw new Error(
      `PostgreSQL's server binaries are missing (no ${POSTGRES_BASE}/<version>/bin/initdb): install Debian's \`postgresql\` package.`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), 'wfkit-pg-'));
  const data = join(root, 'data');
  const sockets = join(root, 'sockets');
  const logFile = join(root, 'server.log');
  mkdirSync(sockets);
  const asServerUser = (command: string, args: string[]): [string, string[]] =>
    isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  if (isRoot()) {
    const { uid, gid } = postgresIds();
    for (const path of [root, sockets]) chownSync(path, uid, gid);
  }
  let started = false;
  const stop = async (): Promise<void> => {
    if (started) {
      started = false;
      await run(...asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']));
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // --no-sync only skips flushing initdb's own files: the server itself runs with fsync on.
    await runOrThrow(
      ...asServerUser(join(bin, 'initdb'), [
        '-D',
        data,
        '-U',
        'postgres',
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--no-sync',
        '--no-instructions',
      ]),
    );
    const port = await freePort();
    const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${sockets} -c max_connections=200`;
    // stdio ignored: the server daemon would otherwise inherit our pipes and hold them open.
    const startResult = await run(
      ...asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-w', '-t', '60', '-o', serverOptions, 'start']),
      { stdio: 'ignore' },
    );
    if (startResult.code !== 0) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '(no log)';
      throw new Error(`pg_ctl start exited ${startResult.code}; server log:\n${log}`);
    }
    started = true;
    const psql = (sql: string, database = 'postgres'): Promise<string> =>
      runOrThrow(
        ...asServerUser(join(bin, 'psql'), [
          '-h',
          sockets,
          '-p',
          String(port),
          '-U',
          'postgres',
          '-d',
          database,
          '-X',
          '-q',
          '-A',
          '-t',
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          sql,
        ]),
      );
    const createDatabase = async (name: string): Promise<string> => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name))
        throw new Error(`Expected a database name of lowercase letters, digits and _, got "${name}".`);
      await psql(`CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    };
    const url = await createDatabase(options.database ?? 'wfkit');
    return { port, url, createDatabase, psql, logFile, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error('Expected an OS user `postgres` (the postgresql package creates it).');
  return { uid: Number(uid), gid: Number(gid) };
}
