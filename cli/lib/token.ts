import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/** Env files `wf init` writes, in the order they are read. */
export const ENV_FILES = ['.env.local', '.env', '.dev.vars'];

export function generateToken(): string {
  return 'wf_' + randomBytes(24).toString('base64url');
}

/** The first env file, in `ENV_FILES` order, that sets `name` to something non-empty. */
function fromEnvFiles(cwd: string, name: string): ResolvedToken | undefined {
  for (const file of ENV_FILES) {
    const path = join(cwd, file);
    if (!existsSync(path)) continue;
    const value = parseEnv(readFileSync(path, 'utf8'))[name];
    if (value) return { token: value, source: file };
  }
  return undefined;
}

export interface ResolvedToken {
  token: string;
  /** Where it came from, for the startup line. */
  source: string;
}

/**
 * A token someone set: --token, WF_TOKEN, SERVICE_TOKEN, the env files, a saved `.wf/token`.
 * One order for `wf dev` and the client commands, so both find the same token in a folder.
 */
function configuredToken(cwd: string, env: NodeJS.ProcessEnv, flag?: string): ResolvedToken | undefined {
  if (flag) return { token: flag, source: '--token' };
  if (env.WF_TOKEN) return { token: env.WF_TOKEN, source: 'WF_TOKEN' };
  if (env.SERVICE_TOKEN) return { token: env.SERVICE_TOKEN, source: 'SERVICE_TOKEN' };
  const fromFile = fromEnvFiles(cwd, 'WF_TOKEN') ?? fromEnvFiles(cwd, 'SERVICE_TOKEN');
  if (fromFile) return fromFile;
  const path = join(cwd, '.wf', 'token');
  // An empty file (truncated, or made by hand) is no token: the runner would refuse to start with it.
  const saved = existsSync(path) ? readFileSync(path, 'utf8').trim() : '';
  return saved ? { token: saved, source: '.wf/token' } : undefined;
}

/**
 * The token the local runner uses: --token, else WF_TOKEN (or SERVICE_TOKEN), else the app's env
 * files, else `.wf/token` (made once), so the app and the runner agree without a manual step.
 */
export function resolveDevToken(cwd: string, env: NodeJS.ProcessEnv, flag?: string): ResolvedToken {
  const configured = configuredToken(cwd, env, flag);
  if (configured) return configured;
  mkdirSync(join(cwd, '.wf'), { recursive: true });
  const token = generateToken();
  writeFileSync(join(cwd, '.wf', 'token'), token + '\n', { mode: 0o600 });
  return { token, source: '.wf/token (new)' };
}

/** The token a client command sends: the same sources as `wf dev`, in the same order; undefined if none. */
export function findClientToken(cwd: string, env: NodeJS.ProcessEnv, flag?: string): string | undefined {
  return configuredToken(cwd, env, flag)?.token;
}
