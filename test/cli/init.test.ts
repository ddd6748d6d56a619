import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { makeInitCommand } from '../../cli/commands/init.js';
import { CliError } from '../../cli/errors.js';
import { detectFramework, FRAMEWORKS, frameworkNamed, type Framework } from '../../cli/lib/frameworks.js';
import type { CliIO } from '../../cli/lib/io.js';
import { scaffold } from '../../cli/lib/scaffold.js';
import { createProgram } from '../../cli/program.js';

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-init-'));
  cleanups.push(dir);
  return dir;
}

function captureIO(cwd: string): { io: CliIO; out: string[] } {
  const out: string[] = [];
  return {
    io: {
      out: (line) => void out.push(line),
      err: (line) => void out.push(line),
      env: {},
      cwd,
      interrupted: () => new Promise(() => {}),
    },
    out,
  };
}

function filesIn(dir: string, base = dir): string[] {
  return readdirSync(dir)
    .flatMap((name) =>
      statSync(join(dir, name)).isDirectory() ? filesIn(join(dir, name), base) : [relative(base, join(dir, name))],
    )
    .sort();
}

const named = (name: string): Framework => frameworkNamed(name)!;
const TOKEN = /^wf_[A-Za-z0-9_-]{32}$/;

describe('wf init: a new app from each starter', () => {
  for (const framework of FRAMEWORKS) {
    it(`${framework.name}: the starter's files, its route, and ${framework.envFile} with a fresh token`, () => {
      const dir = join(tempDir(), 'My App');
      const result = scaffold({ dir, framework, token: 'wf_fixed_token_for_the_snapshot_0000' });
      expect(result).toMatchObject({ mode: 'new', skipped: [], envKept: [], envFile: framework.envFile });
      const files = filesIn(dir);
      expect(files).toContain(framework.routeFile);
      expect(files).toContain('.gitignore');
      expect(files.some((f) => f.includes('_gitignore') || f.includes('{{'))).toBe(false);
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(pkg).toMatchObject({
        name: 'my-app',
        scripts: { dev: expect.any(String) },
        dependencies: { wfkit: '^0.1.0' },
        devDependencies: { 'wfkit-cli': '^0.1.0' },
      });
      expect(detectFramework(pkg)).toBe(framework);
      // What a bare `wf dev` in the app starts and checks.
      expect(pkg.wfkit).toEqual({ dev: framework.devCommand, port: framework.devPort, route: framework.routePath });
      expect(result.devConfig).toBe('wrote');
      const env = readFileSync(join(dir, framework.envFile), 'utf8');
      expect(parseEnv(env)).toEqual({
        WF_TOKEN: 'wf_fixed_token_for_the_snapshot_0000',
        WF_RUNNER_URL: 'http://127.0.0.1:7766',
        ...framework.env,
      });
      expect(statSync(join(dir, framework.envFile)).mode & 0o777).toBe(0o600);
      const route = readFileSync(join(dir, framework.routeFile), 'utf8');
      expect(route).toContain(`from "${framework.importPath}"`);
      expect(route).toContain('"initial-step"');
      // The service's guide: `baseUrl` only when the mode flag ENVIRONMENT says development (the tunnel's
      // WF_WORKFLOW_URL), nothing URL-related in production (the Node starter passes none at all).
      if (framework.name !== 'hono')
        expect(route).toMatch(/baseUrl: [\w.]*ENVIRONMENT === "development" \? [\w.]*WF_WORKFLOW_URL : undefined/);
      expect(route).not.toMatch(/localhost|NODE_ENV|import\.meta\.(dev|env)|\$app\/env"/);
      expect({ files, dev: pkg.scripts.dev, env, route }).toMatchSnapshot();
    });
  }

  it('generates a different random token each time', () => {
    const [a, b] = [tempDir(), tempDir()].map(
      (dir) => scaffold({ dir: join(dir, 'app'), framework: named('nextjs') }).token,
    );
    expect(a).toMatch(TOKEN);
    expect(b).toMatch(TOKEN);
    expect(a).not.toBe(b);
  });
});

describe('wf init: an existing app', () => {
  function existingApp(deps: Record<string, string>, files: Record<string, string> = {}): string {
    const dir = tempDir();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'mine', dependencies: deps }));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    return dir;
  }

  it.each([
    [{ next: '16' }, 'nextjs'],
    [{ '@sveltejs/kit': '3' }, 'svelte'],
    [{ nuxt: '4' }, 'nuxt'],
    [{ '@solidjs/start': '2' }, 'solidjs'],
    [{ hono: '4', wrangler: '4' }, 'hono-workers'],
    [{ hono: '4', '@hono/node-server': '2' }, 'hono'],
    [{ wrangler: '4' }, 'cloudflare'],
  ])('detects %o as %s', (deps, name) => {
    expect(detectFramework({ devDependencies: deps })?.name).toBe(name);
  });

  it('adds only the route (and what it needs) plus the env entries, and keeps every other line', () => {
    const dir = existingApp(
      { '@sveltejs/kit': '3' },
      { '.env.local': 'DATABASE_URL=postgres://x\n', 'src/routes/+page.svelte': '<h1>mine</h1>' },
    );
    const result = scaffold({ dir });
    expect(result).toMatchObject({
      mode: 'existing',
      written: ['src/routes/api/workflow/+server.ts', 'src/env.ts'],
      skipped: [],
    });
    expect(filesIn(dir)).toEqual([
      '.env.local',
      'package.json',
      'src/env.ts',
      'src/routes/+page.svelte',
      'src/routes/api/workflow/+server.ts',
    ]);
    expect(parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'))).toEqual({
      DATABASE_URL: 'postgres://x',
      WF_TOKEN: result.token,
      WF_RUNNER_URL: 'http://127.0.0.1:7766',
    });
    expect(readFileSync(join(dir, 'src/routes/+page.svelte'), 'utf8')).toBe('<h1>mine</h1>');
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toEqual({
      name: 'mine',
      dependencies: { '@sveltejs/kit': '3' },
      wfkit: { dev: 'npm run dev', port: 5173, route: '/api/workflow' },
    });
  });

  it('keeps a "wfkit" field package.json has (and its indentation), and replaces it with --force', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify(
        { name: 'mine', dependencies: { next: '16' }, wfkit: { dev: 'pnpm dev', port: 4000 } },
        null,
        '\t',
      ),
    );
    expect(scaffold({ dir }).devConfig).toBe('kept');
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).wfkit).toEqual({ dev: 'pnpm dev', port: 4000 });
    expect(scaffold({ dir, force: true }).devConfig).toBe('wrote');
    const text = readFileSync(join(dir, 'package.json'), 'utf8');
    expect(JSON.parse(text).wfkit).toEqual({ dev: 'npm run dev', port: 3000, route: '/api/workflow' });
    expect(text).toMatch(/^\t"name": "mine",$/m);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('never overwrites a file or an env entry without --force, and says which it left alone', async () => {
    const dir = existingApp(
      { next: '16' },
      { 'app/api/workflow/route.ts': '// mine\n', '.env.local': 'WF_TOKEN=keep-me' },
    );
    const { io, out } = captureIO(dir);
    await createProgram(io).exitOverride().parseAsync(['init', '--wfkit-from', 'registry'], { from: 'user' });
    expect(readFileSync(join(dir, 'app/api/workflow/route.ts'), 'utf8')).toBe('// mine\n');
    expect(parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'))).toEqual({
      WF_TOKEN: 'keep-me',
      WF_RUNNER_URL: 'http://127.0.0.1:7766',
    });
    expect(out).toContain('  left alone app/api/workflow/route.ts (exists; --force overwrites it)');
    expect(out).toContain('  kept WF_TOKEN in .env.local (--force replaces)');
    expect(out).toContain('  wrote WF_RUNNER_URL to .env.local');
    expect(out).toContain('  npm install wfkit                # what the route imports');
    expect(out).toContain('  npm install --save-dev wfkit-cli # the runner and `wf`, for development');

    const forced = scaffold({ dir, force: true });
    expect(forced.written).toEqual(['app/api/workflow/route.ts']);
    expect(readFileSync(join(dir, 'app/api/workflow/route.ts'), 'utf8')).toContain('wfkit/nextjs');
    expect(parseEnv(readFileSync(join(dir, '.env.local'), 'utf8')).WF_TOKEN).toMatch(TOKEN);
  });

  it('refuses to guess: an app it cannot place and no TTY to ask gives a one-line error listing the names', async () => {
    const dir = existingApp({ express: '5' });
    const error = await createProgram(captureIO(dir).io)
      .exitOverride()
      .parseAsync(['init'], { from: 'user' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toMatch(
      /Cannot tell the framework of the app in .* pass --framework \(hono-workers, hono, nextjs, svelte, nuxt, solidjs, cloudflare\)/,
    );
    expect(existsSync(join(dir, '.env'))).toBe(false);
  });
});

describe('wf init: the command', () => {
  it('asks for the framework when none is given and the folder is not an app, then prints the exact next commands', async () => {
    const cwd = tempDir();
    const { io, out } = captureIO(cwd);
    const asked: string[][] = [];
    const command = makeInitCommand(io, async (choices) => {
      asked.push(choices.map((f) => f.name));
      return named('nuxt');
    });
    await command.exitOverride().parseAsync(['shop', '--wfkit-from', 'registry'], { from: 'user' });
    expect(asked).toEqual([FRAMEWORKS.map((f) => f.name)]);
    expect(existsSync(join(cwd, 'shop', 'server/api/workflow.ts'))).toBe(true);
    expect(out).toContain('  wrote WF_TOKEN, WF_RUNNER_URL to .env.local (WF_TOKEN is new and random)');
    expect(out).toContain(
      '  wrote "wfkit": { dev, port: 3000, route: "/api/workflow" } to package.json (how `wf dev` starts and checks the app)',
    );
    expect(out.slice(-5)).toEqual([
      'Next:',
      '  cd shop',
      '  npm install',
      '  npx wfkit dev              # the runner and the app (npm run dev), one command; --tunnel makes it public',
      `  curl -X POST http://localhost:3000/api/workflow -H 'content-type: application/json' -d '{"text":"hello"}'`,
    ]);
  });

  it('takes --framework without asking, and rejects an unknown one', async () => {
    const cwd = tempDir();
    const command = makeInitCommand(captureIO(cwd).io, async () => {
      throw new Error('must not ask');
    });
    await command.exitOverride().parseAsync(['api', '--framework', 'cloudflare'], { from: 'user' });
    expect(parseEnv(readFileSync(join(cwd, 'api', '.dev.vars'), 'utf8')).ENVIRONMENT).toBe('development');
    const bad = await makeInitCommand(captureIO(cwd).io)
      .exitOverride()
      .configureOutput({ writeErr: () => {} })
      .parseAsync(['x', '--framework', 'rails'], { from: 'user' })
      .catch((e: unknown) => e);
    expect(String(bad)).toMatch(/Allowed choices are hono-workers, hono, nextjs/);
  });
});
