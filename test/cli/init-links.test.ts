import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeInitCommand } from '../../cli/commands/init.js';
import { CliError } from '../../cli/errors.js';
import { frameworkNamed } from '../../cli/lib/frameworks.js';
import type { CliIO } from '../../cli/lib/io.js';
import { shellQuote } from '../../cli/lib/inside-target.js';
import { scaffold } from '../../cli/lib/scaffold.js';

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-init-links-'));
  cleanups.push(dir);
  return dir;
}

const hono = frameworkNamed('hono')!;
const BASHRC = '# my shell\nexport PATH=/opt/bin:$PATH\n';

/** An existing Hono app in `<tmp>/app`, and a folder `<tmp>/outside` that nothing may touch. */
function setup(): { app: string; outside: string } {
  const root = tempDir();
  const app = join(root, 'app');
  const outside = join(root, 'outside');
  mkdirSync(app);
  mkdirSync(outside);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', dependencies: { hono: '^4' } }));
  return { app, outside };
}

function refusal(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('Expected wf init to refuse, but it wrote.');
}

describe('wf init never writes through a link that leaves the target', () => {
  it('refuses an env file linked to a file outside (no append to ~/.bashrc), and writes nothing', () => {
    const { app, outside } = setup();
    const bashrc = join(outside, '.bashrc');
    writeFileSync(bashrc, BASHRC);
    symlinkSync(bashrc, join(app, hono.envFile));
    const error = refusal(() => scaffold({ dir: app, framework: hono }));
    expect(error.code).toBe('UNSAFE_PATH');
    expect(error.message).toContain(join(app, hono.envFile));
    expect(error.message).toContain(`symbolic link to ${bashrc}`);
    expect(readFileSync(bashrc, 'utf8')).toBe(BASHRC);
    expect(existsSync(join(app, hono.routeFile))).toBe(false);
  });

  it('refuses a dangling link whose write would create a file outside', () => {
    const { app, outside } = setup();
    symlinkSync(join(outside, 'created-by-init'), join(app, hono.envFile));
    expect(refusal(() => scaffold({ dir: app, framework: hono })).code).toBe('UNSAFE_PATH');
    expect(existsSync(join(outside, 'created-by-init'))).toBe(false);
  });

  it('refuses a linked src/ folder and a linked package.json, even with --force', () => {
    const { app, outside } = setup();
    symlinkSync(outside, join(app, 'src'));
    expect(refusal(() => scaffold({ dir: app, framework: hono, force: true })).message).toContain(
      `${join(app, 'src')} is a symbolic link to ${outside}`,
    );
    rmSync(join(app, 'src'));
    const pkg = join(outside, 'package.json');
    writeFileSync(pkg, JSON.stringify({ name: 'other', dependencies: { hono: '^4' } }));
    rmSync(join(app, 'package.json'));
    symlinkSync(pkg, join(app, 'package.json'));
    expect(refusal(() => scaffold({ dir: app, framework: hono, force: true })).message).toContain(
      'package.json is a symbolic link',
    );
    expect(JSON.parse(readFileSync(pkg, 'utf8'))).toEqual({ name: 'other', dependencies: { hono: '^4' } });
  });

  it('refuses an env file that is a hard link (its other name may be anywhere)', () => {
    const { app, outside } = setup();
    const bashrc = join(outside, '.bashrc');
    writeFileSync(bashrc, BASHRC);
    linkSync(bashrc, join(app, hono.envFile));
    expect(refusal(() => scaffold({ dir: app, framework: hono })).message).toContain('hard links');
    expect(readFileSync(bashrc, 'utf8')).toBe(BASHRC);
  });

  it('follows links that stay inside the app, and a target folder that is itself a link', () => {
    const { app, outside } = setup();
    mkdirSync(join(app, 'lib'));
    symlinkSync('lib', join(app, 'src'));
    writeFileSync(join(app, 'shared.env'), 'OTHER=1\n');
    symlinkSync('shared.env', join(app, hono.envFile));
    const alias = join(outside, 'alias');
    symlinkSync(app, alias);
    const result = scaffold({ dir: alias, framework: hono, token: 'wf_inside' });
    expect(result.written).toContain(hono.routeFile);
    expect(existsSync(join(app, 'lib', 'app.ts'))).toBe(true); // src/app.ts, through src → lib
    expect(readFileSync(join(app, 'shared.env'), 'utf8')).toContain('WF_TOKEN=wf_inside');
  });
});

describe('wf init: the printed cd line is one shell word', () => {
  it.each([
    ['shop', 'shop'],
    ['my app', "'my app'"],
    ["it's $HOME", `'it'\\''s $HOME'`],
    ['a/b-c_d.e', 'a/b-c_d.e'],
  ])('%s → %s', (dir, quoted) => expect(shellQuote(dir)).toBe(quoted));

  it('prints the quoted cd for a folder with a space, a quote and a $', async () => {
    const cwd = tempDir();
    const out: string[] = [];
    const io: CliIO = {
      out: (line) => void out.push(line),
      err: (line) => void out.push(line),
      env: {},
      cwd,
      interrupted: () => new Promise(() => {}),
    };
    await makeInitCommand(io, async () => undefined).parseAsync([
      'node',
      'init',
      '--framework',
      hono.name,
      `Bob's $app`,
    ]);
    expect(out).toContain(`  cd 'Bob'\\''s $app'`);
  });
});
