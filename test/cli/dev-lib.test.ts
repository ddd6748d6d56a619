import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAppDevConfig, resolveAppSpec } from '../../cli/lib/app-config.js';
import { appEnv } from '../../cli/lib/dev-session.js';
import { explainProbe, explainTunnelProbe, urlWarning, type ProbeResult } from '../../cli/lib/probe.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function appDir(pkg: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-dev-lib-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg));
  return dir;
}

describe('the app wf dev runs: flags over package.json', () => {
  const config = { dev: 'npm run dev', port: 3000, route: '/api/workflow' };

  it.each([
    [
      'package.json alone',
      { argv: [], app: true },
      { command: { shell: 'npm run dev' }, label: 'npm run dev', port: 3000, route: '/api/workflow' },
    ],
    [
      'a command after -- wins, run without a shell',
      { argv: ['node', 'app.js'], app: true },
      { command: { argv: ['node', 'app.js'] }, label: 'node app.js', port: 3000, route: '/api/workflow' },
    ],
    [
      '--app-port and --route win',
      { argv: [], app: true, appPort: 4000, route: '/wf' },
      { command: { shell: 'npm run dev' }, label: 'npm run dev', port: 4000, route: '/wf' },
    ],
    [
      '--no-app keeps the port and route, starts nothing',
      { argv: [], app: false },
      { port: 3000, route: '/api/workflow' },
    ],
  ])('%s', (_label, flags, expected) => {
    expect(resolveAppSpec(flags, config)).toEqual(expected);
  });

  it('nothing at all: the runner alone', () => {
    expect(resolveAppSpec({ argv: [], app: true }, undefined)).toEqual({ port: undefined, route: undefined });
  });

  it('reads "wfkit" from package.json, and names the field that is wrong', () => {
    expect(readAppDevConfig(appDir({ name: 'x', wfkit: config }))).toEqual(config);
    expect(readAppDevConfig(appDir({ name: 'x' }))).toBeUndefined();
    expect(() => readAppDevConfig(appDir({ wfkit: { route: 'api' } }))).toThrow(
      /Expected "route" to be a path starting with \/, got "api" in the "wfkit" field of .*package\.json\./,
    );
    expect(() => readAppDevConfig(appDir({ wfkit: { dev: '' } }))).toThrow(/Expected "dev" to be a command, got ""/);
    expect(() => readAppDevConfig(appDir({ wfkit: 'npm run dev' }))).toThrow(/Expected an object like/);
  });
});

describe('the variables the app gets', () => {
  const base = { env: { HOME: '/home/me' }, token: 'T', runnerUrl: 'http://127.0.0.1:7766', app: { port: 3000 } };

  it('the runner token and URL, PORT, and ENVIRONMENT=development', () => {
    expect(appEnv(base)).toEqual({
      HOME: '/home/me',
      WF_TOKEN: 'T',
      WF_RUNNER_URL: 'http://127.0.0.1:7766',
      PORT: '3000',
      ENVIRONMENT: 'development',
    });
  });

  it("keeps the app's own ENVIRONMENT", () => {
    expect(appEnv({ ...base, env: { ENVIRONMENT: 'staging' } }).ENVIRONMENT).toBe('staging');
  });

  it("replaces the parent's WF_TOKEN and WF_RUNNER_URL, keeps its PORT", () => {
    const env = appEnv({ ...base, env: { WF_TOKEN: 'old', WF_RUNNER_URL: 'http://elsewhere', PORT: '4000' } });
    expect(env).toMatchObject({ WF_TOKEN: 'T', WF_RUNNER_URL: 'http://127.0.0.1:7766', PORT: '4000' });
  });

  it("the tunnel's URL as WF_WORKFLOW_URL, and wrangler told to pass the process env", () => {
    const env = appEnv({ ...base, tunnel: { url: 'https://abc.loca.lt', close: () => {} }, wrangler: true });
    expect(env).toMatchObject({ WF_WORKFLOW_URL: 'https://abc.loca.lt', CLOUDFLARE_INCLUDE_PROCESS_ENV: 'true' });
    expect(appEnv(base)).not.toHaveProperty('CLOUDFLARE_INCLUDE_PROCESS_ENV');
    expect(appEnv(base)).not.toHaveProperty('WF_WORKFLOW_URL');
  });
});

describe('what a probe means', () => {
  const where = { port: 3000, route: '/api/workflow' };
  const rows: [string, ProbeResult, 'info' | 'warn' | 'error', string][] = [
    [
      'ok',
      { kind: 'ok', url: 'http://localhost:3000/api/workflow', framework: 'nextjs' },
      'info',
      'app ok: http://localhost:3000/api/workflow (nextjs)',
    ],
    [
      'refused',
      { kind: 'refused' },
      'error',
      "nothing listens on port 3000 (is the app's dev server on another port? --app-port)",
    ],
    [
      '404',
      { kind: 'status', status: 404, said: 'Not Found' },
      'error',
      'no workflow route at /api/workflow on port 3000 (the app answered 404; --route sets the path)',
    ],
    [
      '405',
      { kind: 'status', status: 405, said: 'Method Not Allowed' },
      'error',
      'no workflow route at /api/workflow on port 3000 (the app answered 405; --route sets the path)',
    ],
    [
      '401',
      { kind: 'status', status: 401, said: 'Invalid signature', code: 'SIGNATURE' },
      'error',
      "the app's WF_TOKEN differs from the runner's (the app said: Invalid signature)",
    ],
    [
      'an older wfkit',
      { kind: 'status', status: 400, said: 'Expected `v` …', code: 'PROTOCOL' },
      'warn',
      "the route at /api/workflow does not know probes (is the app's wfkit older than this CLI?): Expected `v` …",
    ],
    [
      'no token in the app',
      { kind: 'status', status: 500, said: 'WF_TOKEN is not set: …', code: 'CONFIG' },
      'error',
      'the app answered 500 to the probe at /api/workflow: WF_TOKEN is not set: …',
    ],
    [
      'no answer',
      { kind: 'unreachable', reason: 'no answer within 10 s' },
      'error',
      'the app on port 3000 did not answer the probe: no answer within 10 s',
    ],
  ];
  it.each(rows)('%s', (_label, result, level, text) => {
    expect(explainProbe(result, where)).toEqual({ level, text });
  });

  it('through the tunnel: fine, or what the tunnel answered', () => {
    const url = 'https://abc.loca.lt/api/workflow';
    expect(explainTunnelProbe({ kind: 'ok', url, framework: null }, url)).toEqual({
      level: 'info',
      text: `the app answers through the tunnel at ${url}`,
    });
    expect(explainTunnelProbe({ kind: 'status', status: 504, said: 'Gateway Timeout' }, url).text).toBe(
      `the app does not answer through the tunnel at ${url} (504: Gateway Timeout)`,
    );
  });
});

describe('whether the runner can call the URL the app reports', () => {
  const local = { port: 3000, route: '/api/workflow', remote: false };
  it.each([
    ['local runner, the app on its port', 'http://localhost:3000/api/workflow', local, undefined],
    ['local runner, 127.0.0.1', 'http://127.0.0.1:3000/api/workflow', local, undefined],
    ['local runner, a public URL the app was given', 'https://my.tunnel.dev/api/workflow', local, undefined],
    [
      'local runner, another port',
      'http://localhost:5173/api/workflow',
      local,
      /will give the runner http:\/\/localhost:5173\/api\/workflow, but it answers at http:\/\/localhost:3000\/api\/workflow/,
    ],
    [
      'local runner, another path',
      'http://localhost:3000/workflow',
      local,
      /but it answers at http:\/\/localhost:3000\/api\/workflow/,
    ],
    ['tunnel, used', 'https://abc.loca.lt/api/workflow', { ...local, tunnelUrl: 'https://abc.loca.lt' }, undefined],
    [
      'tunnel, ignored',
      'http://localhost:3000/api/workflow',
      { ...local, tunnelUrl: 'https://abc.loca.lt' },
      /not the tunnel's https:\/\/abc\.loca\.lt\/api\/workflow: it does not use WF_WORKFLOW_URL/,
    ],
    [
      'remote runner, loopback',
      'http://localhost:3000/api/workflow',
      { ...local, remote: true },
      /the remote runner cannot call http:\/\/localhost:3000\/api\/workflow .*add --tunnel/,
    ],
    ['remote runner, public', 'https://app.example.com/api/workflow', { ...local, remote: true }, undefined],
  ])('%s', (_label, appUrl, expected, warning) => {
    const found = urlWarning(appUrl, expected);
    if (warning === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(warning);
  });
});
