import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { appEnv } from '../../cli/lib/dev-session.js';
import {
  isUpstashApp,
  mergeEnvText,
  upstashAppEnv,
  upstashEnvFile,
  writeUpstashEnv,
} from '../../cli/lib/upstash-app.js';
import { reportUpstashApp } from '../../cli/lib/upstash-dev.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-upstash-app-'));
  dirs.push(dir);
  return dir;
}

const keys = { current: 'sig_current', next: 'sig_next' };
const VARS = upstashAppEnv({
  runnerUrl: 'http://127.0.0.1:7766',
  token: 'wf_token',
  keys,
  workflowUrl: 'https://tunnel.example.com/',
});

describe('an Upstash Workflow app', () => {
  it('is recognized by @upstash/workflow in its runtime dependencies, not by a devDependency alone', () => {
    expect(isUpstashApp({ dependencies: { '@upstash/workflow': '^1.3.3', next: '15' } })).toBe(true);
    expect(isUpstashApp({ devDependencies: { '@upstash/workflow': '^1' } })).toBe(false);
    // This repository tests against the SDK; its `npm run dev` demo is a wfkit app and must not be announced as an Upstash one.
    expect(isUpstashApp(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')))).toBe(false);
    expect(isUpstashApp({ dependencies: { '@upstash/qstash': '^2' } })).toBe(false);
    expect(isUpstashApp(undefined)).toBe(false);
  });

  it('gets the runner as QStash, its keys, and its public URL without a trailing slash', () => {
    expect(VARS).toEqual({
      QSTASH_URL: 'http://127.0.0.1:7766',
      // Wrapped as QStash issues tokens: the SDK decodes it for createWebhook.
      QSTASH_TOKEN: qstashToken('wf_token'),
      QSTASH_CURRENT_SIGNING_KEY: 'sig_current',
      QSTASH_NEXT_SIGNING_KEY: 'sig_next',
      UPSTASH_WORKFLOW_URL: 'https://tunnel.example.com',
    });
    expect(Object.keys(upstashAppEnv({ runnerUrl: 'http://r', token: 't' }))).toEqual(['QSTASH_URL', 'QSTASH_TOKEN']);
  });

  it('writes to the env file its host reads in development', () => {
    expect(upstashEnvFile({ dependencies: { next: '15', '@upstash/workflow': '1' } })).toBe('.env.local');
    expect(upstashEnvFile({ dependencies: { hono: '4' }, devDependencies: { wrangler: '4' } })).toBe('.dev.vars');
    expect(upstashEnvFile({ dependencies: { hono: '4' } })).toBe('.env');
    expect(upstashEnvFile({ dependencies: { express: '5' } })).toBe('.env');
  });

  it("the app wf dev starts gets the extra variables, and the runner's own still win", () => {
    const env = appEnv({
      env: { PATH: '/bin', QSTASH_URL: 'https://qstash.upstash.io' },
      token: 'wf_token',
      runnerUrl: 'http://127.0.0.1:7766',
      app: { port: 3000 } as never,
      extraEnv: { ...VARS, WF_TOKEN: 'not this' },
    });
    expect(env.QSTASH_URL).toBe('http://127.0.0.1:7766');
    expect(env.QSTASH_CURRENT_SIGNING_KEY).toBe('sig_current');
    expect(env.WF_TOKEN).toBe('wf_token');
    expect(env.PATH).toBe('/bin');
  });
});

describe('reportUpstashApp', () => {
  const lines: string[] = [];
  const report = {
    info: (t: string) => void lines.push(t),
    warn: (t: string) => void lines.push(`warn: ${t}`),
    error: (t: string) => void lines.push(`error: ${t}`),
    app: () => {},
  };
  const io = { out: () => {}, err: () => {}, env: {}, cwd: '.', interrupted: () => new Promise<void>(() => {}) };

  it('gives the app it starts the five values, and turns off what would take it past QSTASH_URL', () => {
    const result = reportUpstashApp({
      io,
      pkg: { dependencies: { '@upstash/workflow': '1' } },
      report,
      runnerUrl: 'http://127.0.0.1:7766',
      token: 'wf_t',
      keys: { keys, source: 'test' },
      appPort: 3000,
      write: false,
    });
    expect(result?.processEnv).toEqual({
      ...upstashAppEnv({
        runnerUrl: 'http://127.0.0.1:7766',
        token: 'wf_t',
        keys,
        workflowUrl: 'http://localhost:3000',
      }),
      QSTASH_DEV: 'false',
      QSTASH_REGION: '',
    });
    expect(lines).toContain('  QSTASH_URL=http://127.0.0.1:7766');
  });

  it("does nothing for another app, and warns when a remote runner's keys are unknown", () => {
    expect(
      reportUpstashApp({
        io,
        pkg: { dependencies: { hono: '4' } },
        report,
        runnerUrl: 'http://r',
        token: 't',
        write: false,
      }),
    ).toBeUndefined();
    lines.length = 0;
    const result = reportUpstashApp({
      io,
      pkg: { dependencies: { '@upstash/workflow': '1' } },
      report,
      runnerUrl: 'http://r',
      token: 't',
      write: false,
    });
    expect(result?.processEnv.QSTASH_CURRENT_SIGNING_KEY).toBeUndefined();
    expect(lines.some((line) => line.startsWith('warn: ') && line.includes('QSTASH_CURRENT_SIGNING_KEY'))).toBe(true);
  });
});

describe('mergeEnvText', () => {
  it('adds what is missing and keeps every other line, comments included', () => {
    const merge = mergeEnvText('# my app\nDATABASE_URL=postgres://x\n\nOTHER="a b"', {
      QSTASH_URL: 'http://127.0.0.1:7766',
    });
    expect(merge.text).toBe('# my app\nDATABASE_URL=postgres://x\n\nOTHER="a b"\nQSTASH_URL=http://127.0.0.1:7766\n');
    expect(merge.added).toEqual(['QSTASH_URL']);
  });

  it('replaces a different value, keeping the old line as a comment; leaves an equal value (quoted or exported) alone', () => {
    const merge = mergeEnvText('QSTASH_TOKEN=real_upstash_token\nexport QSTASH_URL="http://127.0.0.1:7766"\n', {
      QSTASH_TOKEN: 'wf_token',
      QSTASH_URL: 'http://127.0.0.1:7766',
    });
    expect(merge.replaced).toEqual(['QSTASH_TOKEN']);
    expect(merge.unchanged).toEqual(['QSTASH_URL']);
    expect(merge.text).toBe(
      '# wf dev replaced: QSTASH_TOKEN=real_upstash_token\nQSTASH_TOKEN=wf_token\nexport QSTASH_URL="http://127.0.0.1:7766"\n',
    );
    expect(parseEnv(merge.text).QSTASH_TOKEN).toBe('wf_token');
  });

  it('comments out every assignment of a key, so no earlier one can win in any loader', () => {
    const merge = mergeEnvText('QSTASH_URL=a\nX=1\nQSTASH_URL=b\n', { QSTASH_URL: 'c' });
    expect(merge.text).toBe('# wf dev replaced: QSTASH_URL=a\nX=1\n# wf dev replaced: QSTASH_URL=b\nQSTASH_URL=c\n');
  });

  it('does not mistake a longer name for the key', () => {
    const merge = mergeEnvText('QSTASH_URL_BACKUP=x\nMY_QSTASH_URL=y\n', { QSTASH_URL: 'z' });
    expect(merge.added).toEqual(['QSTASH_URL']);
    expect(parseEnv(merge.text)).toEqual({ QSTASH_URL_BACKUP: 'x', MY_QSTASH_URL: 'y', QSTASH_URL: 'z' });
  });

  it('quotes a value that needs it, and the file reads back the same', () => {
    const merge = mergeEnvText('', { UPSTASH_WORKFLOW_URL: 'http://a b#c' });
    expect(parseEnv(merge.text).UPSTASH_WORKFLOW_URL).toBe('http://a b#c');
  });
});

describe('writeUpstashEnv', () => {
  it('creates the file 0600 and writes nothing the second time', () => {
    const dir = folder();
    const first = writeUpstashEnv(dir, '.env.local', VARS);
    expect(first.added).toHaveLength(5);
    expect(parseEnv(readFileSync(join(dir, '.env.local'), 'utf8'))).toEqual(VARS);
    const second = writeUpstashEnv(dir, '.env.local', VARS);
    expect(second.added).toEqual([]);
    expect(second.unchanged).toHaveLength(5);
  });

  it("refuses to write through a link that leaves the app's folder", () => {
    const dir = folder();
    const outside = folder();
    writeFileSync(join(outside, 'secrets'), 'KEEP=me\n');
    symlinkSync(join(outside, 'secrets'), join(dir, '.env'));
    expect(() => writeUpstashEnv(dir, '.env', VARS)).toThrow(/symbolic link/);
    expect(readFileSync(join(outside, 'secrets'), 'utf8')).toBe('KEEP=me\n');
  });
});
