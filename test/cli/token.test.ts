import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findClientToken, resolveDevToken } from '../../cli/lib/token.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder holding `files` (path relative to it → contents). */
function project(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-token-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Every source at once, each with its own value, so the winner is visible. */
const ALL_FILES = {
  '.env.local': 'WF_TOKEN=from-env-local\n',
  '.env': 'WF_TOKEN=from-env\n',
  '.dev.vars': 'WF_TOKEN=from-dev-vars\n',
  '.wf/token': 'from-wf-token\n',
};
const ALL_ENV = { WF_TOKEN: 'from-wf-env', SERVICE_TOKEN: 'from-service-env' };

describe('resolveDevToken precedence', () => {
  it('--token wins over everything', () => {
    expect(resolveDevToken(project(ALL_FILES), ALL_ENV, 'from-flag')).toEqual({
      token: 'from-flag',
      source: '--token',
    });
  });

  it('then WF_TOKEN', () => {
    expect(resolveDevToken(project(ALL_FILES), ALL_ENV)).toEqual({ token: 'from-wf-env', source: 'WF_TOKEN' });
  });

  it('then SERVICE_TOKEN', () => {
    expect(resolveDevToken(project(ALL_FILES), { SERVICE_TOKEN: 'from-service-env' })).toEqual({
      token: 'from-service-env',
      source: 'SERVICE_TOKEN',
    });
  });

  it('an empty variable counts as unset', () => {
    expect(resolveDevToken(project(ALL_FILES), { WF_TOKEN: '', SERVICE_TOKEN: '' }, '').token).toBe('from-env-local');
  });

  it('then the env files, in the order .env.local, .env, .dev.vars, each named as the source', () => {
    expect(resolveDevToken(project(ALL_FILES), {})).toEqual({ token: 'from-env-local', source: '.env.local' });
    const { '.env.local': _local, ...withoutLocal } = ALL_FILES;
    expect(resolveDevToken(project(withoutLocal), {})).toEqual({ token: 'from-env', source: '.env' });
    const { '.env': _env, ...onlyDevVars } = withoutLocal;
    expect(resolveDevToken(project(onlyDevVars), {})).toEqual({ token: 'from-dev-vars', source: '.dev.vars' });
  });

  it('reads SERVICE_TOKEN from an env file, and other variables there do not get in the way', () => {
    const dir = project({ '.env': '# the app\nPORT=3000\nSERVICE_TOKEN="quoted value"\n' });
    expect(resolveDevToken(dir, {})).toEqual({ token: 'quoted value', source: '.env' });
  });

  it('WF_TOKEN in any env file wins over SERVICE_TOKEN in an earlier one', () => {
    const dir = project({ '.env.local': 'SERVICE_TOKEN=service\n', '.dev.vars': 'WF_TOKEN=wf\n' });
    expect(resolveDevToken(dir, {}).token).toBe('wf');
  });

  it('then a saved .wf/token', () => {
    expect(resolveDevToken(project({ '.wf/token': 'saved\n' }), {})).toEqual({ token: 'saved', source: '.wf/token' });
  });
});

describe('resolveDevToken with nothing set', () => {
  it('generates a token, saves it to .wf/token with mode 0600, and reuses it next time', () => {
    const dir = project();
    const first = resolveDevToken(dir, {});
    expect(first.source).toBe('.wf/token (new)');
    expect(first.token).toMatch(/^wf_[A-Za-z0-9_-]{32}$/);
    const path = join(dir, '.wf', 'token');
    expect(readFileSync(path, 'utf8')).toBe(first.token + '\n');
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(resolveDevToken(dir, {})).toEqual({ token: first.token, source: '.wf/token' });
  });

  it('two folders get different tokens', () => {
    expect(resolveDevToken(project(), {}).token).not.toBe(resolveDevToken(project(), {}).token);
  });

  it('an empty .wf/token is replaced, not used as the empty token', () => {
    const dir = project({ '.wf/token': '\n' });
    const { token, source } = resolveDevToken(dir, {});
    expect(source).toBe('.wf/token (new)');
    expect(token).toMatch(/^wf_/);
    expect(readFileSync(join(dir, '.wf', 'token'), 'utf8').trim()).toBe(token);
  });

  it('a token from anywhere else writes nothing', () => {
    const dir = project();
    resolveDevToken(dir, { WF_TOKEN: 'x' });
    expect(existsSync(join(dir, '.wf'))).toBe(false);
  });
});

describe('findClientToken', () => {
  it('follows the same order as the runner, so client and `wf dev` agree', () => {
    expect(findClientToken(project(ALL_FILES), ALL_ENV, 'from-flag')).toBe('from-flag');
    expect(findClientToken(project(ALL_FILES), ALL_ENV)).toBe('from-wf-env');
    expect(findClientToken(project(ALL_FILES), { SERVICE_TOKEN: 'from-service-env' })).toBe('from-service-env');
    expect(findClientToken(project(ALL_FILES), {})).toBe('from-env-local');
    expect(findClientToken(project({ '.wf/token': 'saved\n' }), {})).toBe('saved');
  });

  it('finds SERVICE_TOKEN in an env file, as `wf dev` does', () => {
    const dir = project({ '.env': 'SERVICE_TOKEN=shared\n' });
    expect(resolveDevToken(dir, {}).token).toBe('shared');
    expect(findClientToken(dir, {})).toBe('shared');
  });

  it('is undefined when nothing is set, and creates nothing', () => {
    const dir = project();
    expect(findClientToken(dir, {})).toBeUndefined();
    expect(existsSync(join(dir, '.wf'))).toBe(false);
  });

  it('uses the token `wf dev` generated in the same folder', () => {
    const dir = project();
    expect(findClientToken(dir, {})).toBeUndefined();
    const { token } = resolveDevToken(dir, {});
    expect(findClientToken(dir, {})).toBe(token);
  });
});
