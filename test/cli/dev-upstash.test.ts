import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';

/**
 * `wf dev` in an Upstash Workflow app's folder, in process, on a real runner (SQLite in the folder,
 * port 0): what it prints, what it writes with --write-upstash-env, and that its keys survive a restart.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function upstashApp(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-dev-upstash-'));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'app', dependencies: { '@upstash/workflow': '^1.3.3', next: '^15' } }),
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Runs `wf dev --no-app --no-tui --port 0 …` until it waits for runs, then stops it like Ctrl-C; resolves its output. */
async function devOnce(cwd: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const out: string[] = [];
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const io: CliIO = {
    out: (line) => {
      out.push(line);
      if (line.includes('waiting for runs')) interrupt();
    },
    err: (line) => void out.push(line),
    env: { WF_TOKEN: 'wf_test_token', ...env },
    cwd,
    interrupted: () => interrupted,
  };
  await createProgram(io)
    .exitOverride()
    .parseAsync(['dev', '--no-app', '--no-tui', '--port', '0', ...args], { from: 'user' });
  return out;
}

const printedValue = (out: string[], name: string): string | undefined =>
  out.map((line) => new RegExp(`^wf dev:\\s+${name}=(.*)$`).exec(line)?.[1]).find(Boolean);

describe('wf dev for an Upstash Workflow app', () => {
  it('prints the five values, with a pair of keys made once and the same after a restart', {
    timeout: 30_000,
  }, async () => {
    const dir = upstashApp();
    const first = await devOnce(dir);
    const runnerUrl = /runner listening on (http:\/\/\S+)/.exec(first.join('\n'))?.[1];
    expect(runnerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printedValue(first, 'QSTASH_URL')).toBe(runnerUrl);
    // Wrapped as QStash issues tokens (the SDK decodes it for webhooks); the runner takes both forms.
    expect(printedValue(first, 'QSTASH_TOKEN')).toBe(qstashToken('wf_test_token'));
    const current = printedValue(first, 'QSTASH_CURRENT_SIGNING_KEY');
    const next = printedValue(first, 'QSTASH_NEXT_SIGNING_KEY');
    expect(current).toMatch(/^sig_/);
    expect(next).toMatch(/^sig_/);
    expect(first.join('\n')).toContain('.wf/qstash-signing-keys.json (new)');
    const again = await devOnce(dir);
    expect(printedValue(again, 'QSTASH_CURRENT_SIGNING_KEY')).toBe(current);
    expect(printedValue(again, 'QSTASH_NEXT_SIGNING_KEY')).toBe(next);
  });

  it("uses the keys of the environment, and writes the values into .env.local with --write-upstash-env, keeping the app's other lines", {
    timeout: 30_000,
  }, async () => {
    const dir = upstashApp({ '.env.local': 'DATABASE_URL=postgres://db\nQSTASH_TOKEN=my_real_upstash_token\n' });
    const out = await devOnce(dir, ['--write-upstash-env', '--app-port', '3999'], {
      QSTASH_CURRENT_SIGNING_KEY: 'sig_env_a',
      QSTASH_NEXT_SIGNING_KEY: 'sig_env_b',
    });
    const text = readFileSync(join(dir, '.env.local'), 'utf8');
    const env = parseEnv(text);
    expect(env).toMatchObject({
      DATABASE_URL: 'postgres://db',
      QSTASH_TOKEN: qstashToken('wf_test_token'),
      QSTASH_CURRENT_SIGNING_KEY: 'sig_env_a',
      QSTASH_NEXT_SIGNING_KEY: 'sig_env_b',
      UPSTASH_WORKFLOW_URL: 'http://localhost:3999',
    });
    expect(env.QSTASH_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(text).toContain('# wf dev replaced: QSTASH_TOKEN=my_real_upstash_token');
    expect(out.join('\n')).toMatch(
      /\.env\.local: added QSTASH_URL, QSTASH_CURRENT_SIGNING_KEY, QSTASH_NEXT_SIGNING_KEY, UPSTASH_WORKFLOW_URL; replaced QSTASH_TOKEN/,
    );
  });

  it('says nothing of QStash for an app without @upstash/workflow', { timeout: 30_000 }, async () => {
    const dir = upstashApp();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', dependencies: { hono: '^4' } }));
    const out = await devOnce(dir);
    expect(out.join('\n')).not.toContain('QSTASH_URL');
  });

  it('refuses one signing key without the other', async () => {
    const dir = upstashApp();
    await expect(devOnce(dir, [], { QSTASH_CURRENT_SIGNING_KEY: 'sig_only' })).rejects.toThrow(
      /QSTASH_NEXT_SIGNING_KEY/,
    );
  });
});
