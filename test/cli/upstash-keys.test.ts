import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../cli/errors.js';
import { configuredUpstashKeys, DEV_KEYS_FILE, resolveDevUpstashKeys } from '../../cli/lib/upstash-keys.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-upstash-keys-'));
  dirs.push(dir);
  return dir;
}

const ENV = { QSTASH_CURRENT_SIGNING_KEY: 'sig_env_current', QSTASH_NEXT_SIGNING_KEY: 'sig_env_next' };

describe('configuredUpstashKeys', () => {
  it('reads both keys from the variables the app uses', () => {
    expect(configuredUpstashKeys(ENV, {})).toEqual({
      keys: { current: 'sig_env_current', next: 'sig_env_next' },
      source: 'QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY',
    });
  });

  it('a flag wins over its variable', () => {
    const resolved = configuredUpstashKeys(ENV, { qstashCurrentSigningKey: 'sig_flag' });
    expect(resolved?.keys).toEqual({ current: 'sig_flag', next: 'sig_env_next' });
    expect(resolved?.source).toContain('--qstash-');
  });

  it('none set (or empty) is no keys', () => {
    expect(configuredUpstashKeys({}, {})).toBeUndefined();
    expect(configuredUpstashKeys({ QSTASH_CURRENT_SIGNING_KEY: '', QSTASH_NEXT_SIGNING_KEY: '' }, {})).toBeUndefined();
  });

  it('one key alone is refused, naming the missing one', () => {
    const thrown = (() => {
      try {
        configuredUpstashKeys({ QSTASH_CURRENT_SIGNING_KEY: 'sig_a' }, {});
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).code).toBe('BAD_SIGNING_KEYS');
    expect((thrown as CliError).message).toContain('QSTASH_NEXT_SIGNING_KEY');
    expect(() => configuredUpstashKeys({}, { qstashNextSigningKey: 'sig_b' })).toThrow(/QSTASH_CURRENT_SIGNING_KEY/);
  });
});

describe('resolveDevUpstashKeys', () => {
  it('makes a pair once, saves it 0600, and finds the same pair on the next start', () => {
    const dir = folder();
    const first = resolveDevUpstashKeys(dir, {}, {});
    expect(first.source).toBe(`${DEV_KEYS_FILE} (new)`);
    expect(first.keys.current).toMatch(/^sig_[\w-]{43}$/);
    expect(first.keys.next).toMatch(/^sig_[\w-]{43}$/);
    expect(first.keys.current).not.toBe(first.keys.next);
    expect(statSync(join(dir, DEV_KEYS_FILE)).mode & 0o777).toBe(0o600);
    const again = resolveDevUpstashKeys(dir, {}, {});
    expect(again).toEqual({ keys: first.keys, source: DEV_KEYS_FILE });
  });

  it('the variables win over the saved pair, which stays as it was', () => {
    const dir = folder();
    const saved = resolveDevUpstashKeys(dir, {}, {}).keys;
    expect(resolveDevUpstashKeys(dir, ENV, {}).keys).toEqual({ current: 'sig_env_current', next: 'sig_env_next' });
    expect(JSON.parse(readFileSync(join(dir, DEV_KEYS_FILE), 'utf8'))).toEqual(saved);
  });

  it('a damaged file is replaced by a new pair rather than used', () => {
    const dir = folder();
    mkdirSync(join(dir, '.wf'));
    writeFileSync(join(dir, DEV_KEYS_FILE), '{"current": "sig_only"}');
    const resolved = resolveDevUpstashKeys(dir, {}, {});
    expect(resolved.source).toBe(`${DEV_KEYS_FILE} (new)`);
    expect(resolved.keys.next).toMatch(/^sig_/);
  });
});
