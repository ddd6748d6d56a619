import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/** Env files `wf init` writes, in the order they are read. */
export const ENV_FILES = ['.env.local', '.env', '.dev.vars'];

export function generateToken(): string {
  return 'wf_' + randomBytes(24).toString('base64url');
}

function fromEnvFiles(cwd: string, name: string): string | undefined {
  for (const file of ENV_FILES) {
    const path = join(cwd, file);
    if (!existsSync(path)) continue;
    const value = parseEnv(readFileSync(path, 'utf8'))[name];
    if (value) return value;
  }
  return undefined;
}

export interface ResolvedToken {
  token: string;
  /** Where it came from, for the startup line. */
  source: string;
}

/**
 * The token the local runner uses: --token, else WF_TOKEN (or SERVICE_TOKEN), else the app's env
 * files, else `.wf/token` (made once), so the app and the runner agree without a manual step.
 */
export function resolveDevToken(cwd: string, env: NodeJS.ProcessEnv, flag?: string): ResolvedToken {
  if (flag) return { token: flag, source: '--token' };
  const fromEnv = env.WF_TOKEN || env.SERVICE_TOKEN;
  if (fromEnv) return { token: fromEnv, source: env.WF_TOKEN ? 'WF_TOKEN' : 'SERVICE_TOKEN' };
  const fromFile = fromEnvFiles(cwd, 'WF_TOKEN') ?? fromEnvFiles(cwd, 'SERVICE_TOKEN');
  if (fromFile) return { token: fromFile, source: 'the env file' };
  const path = join(cwd, '.wf', 'token');
  if (existsSync(path)) return { token: readFileSync(path, 'utf8').trim(), source: '.wf/token' };
  mkdirSync(join(cwd, '.wf'), { recursive: true });
  const token = generateToken();
  writeFileSync(path, token + '\n', { mode: 0o600 });
  return { token, source: '.wf/token (new)' };
}

/** The token a client command sends: --token, WF_TOKEN, env files, `.wf/token`; undefined if none. */
export function findClientToken(cwd: string, env: NodeJS.ProcessEnv, flag?: string): string | undefined {
  if (flag) return flag;
  if (env.WF_TOKEN || env.SERVICE_TOKEN) return env.WF_TOKEN || env.SERVICE_TOKEN;
  const fromFile = fromEnvFiles(cwd, 'WF_TOKEN');
  if (fromFile) return fromFile;
  const path = join(cwd, '.wf', 'token');
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}
