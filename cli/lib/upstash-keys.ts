import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { generateUpstashSigningKey, type UpstashSigningKeys } from '../../runner-core/qstash/signing-keys.js';
import { CliError } from '../errors.js';

/** `--qstash-current-signing-key` / `--qstash-next-signing-key`, as commander hands them over. */
export interface UpstashKeyFlags {
  qstashCurrentSigningKey?: string;
  qstashNextSigningKey?: string;
}

/** Where `wf dev` keeps the pair it made, beside `.wf/token`: the same keys after every restart. */
export const DEV_KEYS_FILE = join('.wf', 'qstash-signing-keys.json');

export interface ResolvedUpstashKeys {
  keys: UpstashSigningKeys;
  /** Where they came from, for the startup line. */
  source: string;
}

/**
 * Adds the two signing-key flags. The variables are the better place (argv is visible to the
 * machine's other users); the flags exist for the same reason `--token` does on `wf dev`.
 */
export function addUpstashKeyFlags(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--qstash-current-signing-key <key>',
        'key Upstash-protocol deliveries are signed with (default: QSTASH_CURRENT_SIGNING_KEY)',
      ),
    )
    .addOption(
      new Option(
        '--qstash-next-signing-key <key>',
        'the key apps also accept, for rotation (default: QSTASH_NEXT_SIGNING_KEY)',
      ),
    );
}

/**
 * The pair someone set: each key from its flag, else its variable. Both or neither: one alone
 * would leave the app's `Receiver` (which needs both) unable to verify.
 * @example configuredUpstashKeys({ QSTASH_CURRENT_SIGNING_KEY: 'sig_a', QSTASH_NEXT_SIGNING_KEY: 'sig_b' }, {})
 */
export function configuredUpstashKeys(env: NodeJS.ProcessEnv, flags: UpstashKeyFlags): ResolvedUpstashKeys | undefined {
  const current = flags.qstashCurrentSigningKey || env.QSTASH_CURRENT_SIGNING_KEY || undefined;
  const next = flags.qstashNextSigningKey || env.QSTASH_NEXT_SIGNING_KEY || undefined;
  if (current === undefined && next === undefined) return undefined;
  if (current === undefined || next === undefined) {
    const [set, missing] = current === undefined ? ['next', 'current'] : ['current', 'next'];
    throw new CliError(
      2,
      'BAD_SIGNING_KEYS',
      `Expected both Upstash signing keys, got only the ${set} one: set QSTASH_${missing.toUpperCase()}_SIGNING_KEY (or --qstash-${missing}-signing-key) too; the app's Receiver needs both.`,
    );
  }
  const source =
    flags.qstashCurrentSigningKey || flags.qstashNextSigningKey
      ? 'the --qstash-*-signing-key flags'
      : 'QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY';
  return { keys: { current, next }, source };
}

/** The pair `wf dev` saved, when the file holds one; anything else there is treated as no file. */
function savedKeys(cwd: string): UpstashSigningKeys | undefined {
  const path = join(cwd, DEV_KEYS_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<UpstashSigningKeys> | null;
    if (
      typeof value?.current === 'string' &&
      value.current !== '' &&
      typeof value.next === 'string' &&
      value.next !== ''
    ) {
      return { current: value.current, next: value.next };
    }
  } catch {}
  return undefined;
}

/**
 * `wf dev`'s signing keys: the flags or variables, else the pair saved in `.wf/`, else a new pair
 * saved there (mode 0600), so an app whose env file holds them keeps verifying after a restart.
 */
export function resolveDevUpstashKeys(
  cwd: string,
  env: NodeJS.ProcessEnv,
  flags: UpstashKeyFlags,
): ResolvedUpstashKeys {
  const configured = configuredUpstashKeys(env, flags);
  if (configured) return configured;
  const saved = savedKeys(cwd);
  if (saved) return { keys: saved, source: DEV_KEYS_FILE };
  const keys = { current: generateUpstashSigningKey(), next: generateUpstashSigningKey() };
  mkdirSync(join(cwd, '.wf'), { recursive: true });
  writeFileSync(join(cwd, DEV_KEYS_FILE), JSON.stringify(keys, null, 2) + '\n', { mode: 0o600 });
  return { keys, source: `${DEV_KEYS_FILE} (new)` };
}
