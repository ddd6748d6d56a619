import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CliError } from '../../cli/errors.js';
import type { CliIO } from '../../cli/lib/io.js';
import { startLocalRunner, type LocalRunner } from '../../cli/lib/local-runner.js';
import { createProgram, VERSION } from '../../cli/program.js';
import { serve } from '../../serve/adapters/node.js';
import { startServer, unusedUrl, type Endpoint } from '../helpers/endpoint.js';

/** A CliIO whose lines land in arrays and whose Ctrl-C is `interrupt()`. */
function captureIO(
  cwd = tmpdir(),
  env: NodeJS.ProcessEnv = {},
): { io: CliIO; out: string[]; err: string[]; interrupt: () => void } {
  const out: string[] = [];
  const err: string[] = [];
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void err.push(line),
    env,
    cwd,
    interrupted: () => interrupted,
  };
  return { io, out, err, interrupt };
}

function parse(io: CliIO, ...args: string[]): Promise<unknown> {
  return createProgram(io).exitOverride().parseAsync(args, { from: 'user' });
}

/** Runs `args` and returns what it threw; fails the test when nothing was thrown. */
async function thrown(io: CliIO, ...args: string[]): Promise<unknown> {
  try {
    await parse(io, ...args);
  } catch (error) {
    return error;
  }
  throw new Error(`Expected \`wf ${args.join(' ')}\` to throw, but it finished.`);
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-program-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

it('runs on the pinned Node 24', () => {
  expect(process.version).toMatch(/^v24\./);
});

describe('help and version', () => {
  const commands: [string, string[]][] = [
    [
      'dev',
      [
        '--port <port>',
        '--host <host>',
        '--db <path>',
        '--token <token>',
        '--no-tui',
        '--alert-webhook <url>',
        '--public-url <url>',
      ],
    ],
    ['logs', ['[runId]', '--follow', '--json', '--step <step>', '--runner <url>', '--token <token>']],
    ['runs', ['--status <status>', '--limit <n>', '--cursor <runId>', '--json', '--runner <url>', '--token <token>']],
    ['trigger', ['<url>', '--data <json>', '--header <header>', '--idempotency-key <key>']],
    ['cancel', ['<runId>', '--runner <url>', '--token <token>']],
  ];

  it('--help lists every command and the global options', async () => {
    const { io, out } = captureIO();
    const error = await thrown(io, '--help');
    expect(error).toBeInstanceOf(CommanderError);
    expect(error).toMatchObject({ exitCode: 0, code: 'commander.helpDisplayed' });
    const help = out.join('\n');
    for (const [name] of commands) expect(help).toContain(`${name} [options]`);
    expect(help).toContain('--version');
    expect(help).toContain('--debug');
  });

  it.each(commands)('%s --help lists its options, through the injected IO', async (name, flags) => {
    const { io, out } = captureIO();
    const error = await thrown(io, name, '--help');
    expect(error).toMatchObject({ exitCode: 0, code: 'commander.helpDisplayed' });
    const help = out.join('\n');
    expect(help).toContain(`Usage: wf ${name}`);
    for (const flag of flags) expect(help).toContain(flag);
  });

  it('`help <command>` shows the same help', async () => {
    const { io, out } = captureIO();
    await expect(thrown(io, 'help', 'runs')).resolves.toMatchObject({ exitCode: 0 });
    expect(out.join('\n')).toContain('Usage: wf runs');
  });

  it('--version prints the version of package.json', async () => {
    const { io, out } = captureIO();
    const error = await thrown(io, '--version');
    expect(error).toMatchObject({ exitCode: 0, code: 'commander.version' });
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect(out).toEqual([pkg.version]);
  });
});

describe('bad input is a CommanderError naming what was expected and what was given', () => {
  it('an unknown command names it, suggests a near one and points at --help', async () => {
    const { io, err } = captureIO();
    const error = await thrown(io, 'rnus');
    expect(error).toBeInstanceOf(CommanderError);
    expect(error).toMatchObject({ exitCode: 1, code: 'commander.unknownCommand' });
    expect((error as Error).message).toContain("'rnus'");
    expect(err.join('\n')).toContain('Did you mean runs?');
    expect(err.join('\n')).toContain('--help');
  });

  const cases: [string, string[], string[]][] = [
    [
      'runs --status nope',
      ['runs', '--status', 'nope'],
      ["'nope'", 'queued, running, sleeping, waiting, completed, failed, cancelled'],
    ],
    ['runs --limit 0', ['runs', '--limit', '0'], ['Expected a positive integer', '"0"']],
    ['runs --limit 1.5', ['runs', '--limit', '1.5'], ['Expected a positive integer', '"1.5"']],
    ['dev --port 70000', ['dev', '--port', '70000'], ['Expected a port from 0 to 65535', '"70000"']],
    ['dev --port abc', ['dev', '--port', 'abc'], ['Expected a port from 0 to 65535', '"abc"']],
    [
      "trigger --data '{bad'",
      ['trigger', 'http://127.0.0.1:1/workflow', '--data', '{bad'],
      ['Expected JSON', '"{bad"'],
    ],
    [
      "trigger -H 'nocolon'",
      ['trigger', 'http://127.0.0.1:1/workflow', '-H', 'nocolon'],
      ['Expected a header as "Name: value"', '"nocolon"'],
    ],
  ];

  it.each(cases)('%s', async (_title, args, expected) => {
    const { io, err } = captureIO();
    const error = await thrown(io, ...args);
    expect(error).toBeInstanceOf(CommanderError);
    expect(error).toMatchObject({ exitCode: 1, code: 'commander.invalidArgument' });
    for (const part of expected) expect((error as Error).message).toContain(part);
    // The subcommand writes through the program's IO, with the same hint as the program itself.
    expect(err.join('\n')).toContain((error as Error).message);
    expect(err.join('\n')).toContain('(add --help for usage)');
  });

  it('a missing argument names it', async () => {
    const { io } = captureIO();
    await expect(thrown(io, 'cancel')).resolves.toMatchObject({
      code: 'commander.missingArgument',
      message: expect.stringContaining('runId'),
    });
  });
});

describe('client commands against an unreachable runner', () => {
  const runner = 'http://127.0.0.1:1';
  const id = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
  it.each([
    ['runs', ['runs']],
    ['logs', ['logs']],
    ['logs <id>', ['logs', id]],
    ['logs --follow', ['logs', '--follow']],
    ['logs <id> --follow', ['logs', id, '--follow']],
    ['cancel <id>', ['cancel', id]],
  ])('%s rejects with UNREACHABLE naming the URL', async (_title, args) => {
    const { io, out } = captureIO(tempDir());
    const error = await thrown(io, ...args, '--runner', runner, '--token', 'T');
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ code: 'UNREACHABLE', exitCode: 1 });
    expect((error as Error).message).toContain(runner);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(out).toEqual([]);
  });

  it('trigger against an app that is not running rejects with UNREACHABLE naming the URL', async () => {
    const url = (await unusedUrl()) + '/workflow';
    const { io } = captureIO();
    await expect(thrown(io, 'trigger', url)).resolves.toMatchObject({
      code: 'UNREACHABLE',
      message: expect.stringContaining(url),
    });
  });
});

describe('dev in-process', () => {
  it('prints where it listens, then stops cleanly on interrupt', async () => {
    const dir = tempDir();
    const { io, out, interrupt } = captureIO(dir);
    const running = parse(io, 'dev', '--no-tui', '--port', '0', '--token', 'T');
    await vi.waitFor(() => expect(out.join('\n')).toMatch(/runner listening on http:\/\/127\.0\.0\.1:\d+ /));
    expect(out.join('\n')).toContain('WF_TOKEN=T');
    interrupt();
    await running;
    expect(out.at(-1)).toContain('stopping');
  });

  it('a port in use is a one-line CliError naming the port', async () => {
    const busy = await startServer((_req, res) => res.end());
    cleanups.push(() => busy.close());
    const port = new URL(busy.url).port;
    const { io } = captureIO(tempDir());
    const error = await thrown(io, 'dev', '--no-tui', '--port', port, '--token', 'T');
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ code: 'EADDRINUSE', exitCode: 1 });
    expect((error as Error).message).toContain(`Port ${port}`);
    expect((error as Error).message).not.toContain('\n');
  });
});

/** A proxy in front of the runner that holds `GET /v1/events` until `release()`; counts what it saw. */
async function holdingProxy(target: string): Promise<Endpoint & { eventRequests: number; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const state = { eventRequests: 0 };
  const endpoint = await startServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (req.url?.startsWith('/v1/events')) {
        state.eventRequests++;
        await released;
      }
      const upstream = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    })();
  });
  return {
    ...endpoint,
    release,
    get eventRequests() {
      return state.eventRequests;
    },
  };
}

describe('logs --follow against a live runner', () => {
  it('ends when the run finishes between subscribing and reading its history', async () => {
    const dir = tempDir();
    const local: LocalRunner = await startLocalRunner({
      dbPath: join(dir, 'dev.db'),
      host: '127.0.0.1',
      port: 0,
      tokens: ['T'],
    });
    cleanups.push(() => local.close());
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    cleanups.push(() => openGate());
    let route: ReturnType<typeof serve> | undefined;
    const app = createServer((req, res) => void route!(req, res));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    // Told its public URL, as a deployed app is: outside development a route never takes it from Host.
    route = serve<{ text: string }>(
      async (context) => {
        const upper = await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
        await context.run('second-step', async () => (await gate, upper.length));
      },
      { token: 'T', runnerUrl: local.url, baseUrl: `http://127.0.0.1:${(app.address() as { port: number }).port}` },
    );
    cleanups.push(() => new Promise<void>((resolve) => (app.closeAllConnections(), app.close(() => resolve()))));
    const proxy = await holdingProxy(local.url);
    cleanups.push(() => proxy.close());
    cleanups.push(() => proxy.release());

    const port = (app.address() as { port: number }).port;
    const started = await fetch(`http://127.0.0.1:${port}/workflow`, { method: 'POST', body: '{"text":"hi"}' });
    const { workflowRunId: id } = (await started.json()) as { workflowRunId: string };
    await vi.waitFor(async () =>
      expect((await local.runner.store.listSteps(id)).map((s) => s.status)).toContain('succeeded'),
    );

    const { io, out, interrupt } = captureIO(dir);
    cleanups.push(interrupt);
    let settled = false;
    const following = parse(io, 'logs', id, '--follow', '--runner', proxy.url, '--token', 'T').finally(
      () => (settled = true),
    );
    await vi.waitFor(() => expect(proxy.eventRequests).toBe(1));
    // The run finishes while the event stream is still connecting: its end must not be missed.
    openGate();
    await vi.waitFor(async () => expect((await local.runner.store.getRun(id))?.status).toBe('completed'));
    proxy.release();
    await vi.waitFor(() => expect(settled).toBe(true), { timeout: 5_000 });
    await following;
    const text = out.join('\n');
    expect(text).toContain('step 1 second-step succeeded');
    expect(text).toContain('run completed');
  });
});

describe('logs: an app that does not answer', () => {
  it('says since when and the next try, in text and in --json', async () => {
    const dir = tempDir();
    const local: LocalRunner = await startLocalRunner({
      dbPath: join(dir, 'dev.db'),
      host: '127.0.0.1',
      port: 0,
      tokens: ['T'],
    });
    cleanups.push(() => local.close());
    const { run } = await local.runner.startRun({ url: `${await unusedUrl()}/workflow`, body: '{}', headers: {} });
    await vi.waitFor(async () => expect((await local.runner.store.getRun(run.id))?.unreachableSince).not.toBeNull());

    const text = captureIO(dir);
    await parse(text.io, 'logs', run.id, '--runner', local.url, '--token', 'T');
    expect(text.out.at(-1)).toMatch(
      /run running · app unreachable since \d\d:\d\d:\d\d\.\d{3}, next try at \d\d:\d\d:\d\d\.\d{3} · 0 steps$/,
    );
    const json = captureIO(dir);
    await parse(json.io, 'logs', run.id, '--runner', local.url, '--token', 'T', '--json');
    const last = JSON.parse(json.out.at(-1)!) as {
      type: string;
      run: { unreachableSince: number; nextAt: number; failures: number };
    };
    expect(last.type).toBe('run');
    expect(last.run.unreachableSince).toBeGreaterThan(0);
    expect(last.run.nextAt).toBeGreaterThan(last.run.unreachableSince);
    expect(last.run.failures).toBe(0);
    await local.runner.cancelRun(run.id);
  });
});
