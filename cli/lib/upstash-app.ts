import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import type { UpstashSigningKeys } from '../../runner-core/qstash/signing-keys.js';
import { detectFramework } from './frameworks.js';
import { assertWritesInside } from './inside-target.js';

type AppPackage = { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

/**
 * An app written for Upstash Workflow: `@upstash/workflow` is among its runtime `dependencies`.
 * A devDependency alone does not count: the route imports the SDK at run time, and a project that
 * only tests against it (this repository, whose `npm run dev` demo is a wfkit app) is not one.
 */
export function isUpstashApp(pkg: AppPackage | undefined): boolean {
  return pkg?.dependencies !== undefined && '@upstash/workflow' in pkg.dependencies;
}

export interface UpstashAppEnvOptions {
  runnerUrl: string;
  token: string;
  /** Undefined for a `--remote` runner whose keys `wf dev` was not given. */
  keys?: UpstashSigningKeys;
  /** The app's public base URL (the tunnel's), else `http://localhost:<port>` when the port is known. */
  workflowUrl?: string;
}

/**
 * What an Upstash Workflow app needs to use this runner instead of QStash, under the names its SDK
 * reads: the runner is QStash (`QSTASH_URL`, `QSTASH_TOKEN`), its deliveries verify with the
 * runner's keys, and `UPSTASH_WORKFLOW_URL` is where the runner reaches the app.
 * @example upstashAppEnv({ runnerUrl: 'http://127.0.0.1:7766', token: 'wf_…', keys })
 */
export function upstashAppEnv(options: UpstashAppEnvOptions): Record<string, string> {
  return {
    QSTASH_URL: options.runnerUrl,
    // Wrapped as QStash issues tokens: the SDK decodes it for createWebhook; the runner takes both.
    QSTASH_TOKEN: qstashToken(options.token),
    ...(options.keys && {
      QSTASH_CURRENT_SIGNING_KEY: options.keys.current,
      QSTASH_NEXT_SIGNING_KEY: options.keys.next,
    }),
    ...(options.workflowUrl !== undefined && { UPSTASH_WORKFLOW_URL: options.workflowUrl.replace(/\/+$/, '') }),
  };
}

/**
 * Variables set only in the environment of the app `wf dev` starts, never written to a file, for
 * settings that would take the app past QSTASH_URL: `@upstash/qstash` 2.12+ swaps in its own dev
 * server (and its fixed keys) when QSTASH_DEV is on, and reads `<region>_QSTASH_URL` instead when
 * QSTASH_REGION is set. Set in the process, they win over the app's env files (dotenv, Next.js and
 * wrangler's `--env-file` do not override a variable the process has).
 */
export const UPSTASH_PROCESS_ONLY_ENV: Readonly<Record<string, string>> = { QSTASH_DEV: 'false', QSTASH_REGION: '' };

/** The env file the app's host reads in development: `.dev.vars` (wrangler), `.env.local` (Next.js, SvelteKit, Nuxt), else `.env`. */
export function upstashEnvFile(pkg: AppPackage | undefined): string {
  return (pkg && detectFramework(pkg)?.envFile) ?? '.env';
}

export interface EnvMerge {
  text: string;
  added: string[];
  /** Entries that held another value; their old line stays above, commented out. */
  replaced: string[];
  unchanged: string[];
}

const quoteIfNeeded = (value: string): string => (/^[\w./:@+-]*$/.test(value) ? value : JSON.stringify(value));

/**
 * Sets `wanted` in an env file's text and leaves every other line as it was. A line that sets one
 * of them to something else is commented out (`# wf dev replaced: …`), not deleted, so the app's
 * own QStash credentials are one edit away; a line already right is left alone.
 */
export function mergeEnvText(text: string, wanted: Record<string, string>): EnvMerge {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const result: EnvMerge = { text: '', added: [], replaced: [], unchanged: [] };
  for (const [key, value] of Object.entries(wanted)) {
    const setsKey = new RegExp(`^[ \\t]*(?:export[ \\t]+)?${key}[ \\t]*=(.*)$`);
    const indexes = lines.flatMap((line, i) => (setsKey.test(line) ? [i] : []));
    const line = `${key}=${quoteIfNeeded(value)}`;
    if (indexes.length === 0) {
      lines.push(line);
      result.added.push(key);
      continue;
    }
    // The last assignment wins in dotenv and wrangler: that is the one to compare and replace.
    const last = indexes[indexes.length - 1]!;
    if (parseEnv(lines[last]!.replace(/^[ \t]*export[ \t]+/, ''))[key] === value) {
      result.unchanged.push(key);
      continue;
    }
    for (const i of indexes) lines[i] = `# wf dev replaced: ${lines[i]}`;
    lines.splice(last + 1, 0, line);
    result.replaced.push(key);
  }
  result.text = lines.length === 0 ? '' : lines.join('\n') + '\n';
  return result;
}

/**
 * Writes `wanted` into `file` under `dir` (created 0600 when absent), through no link that
 * leaves `dir` (the guard `wf init` uses).
 */
export function writeUpstashEnv(dir: string, file: string, wanted: Record<string, string>): EnvMerge {
  assertWritesInside(dir, file);
  const path = join(dir, file);
  const merge = mergeEnvText(existsSync(path) ? readFileSync(path, 'utf8') : '', wanted);
  if (merge.added.length > 0 || merge.replaced.length > 0) writeFileSync(path, merge.text, { mode: 0o600 });
  return merge;
}
