/**
 * `wf start`'s young generation. Under a load of runs in flight, every scavenge keeps most new
 * objects alive, so V8 doubles its new space up to its limit (64 MiB with default flags) and keeps
 * it there: about 40 MB of a runner's peak resident memory with 1,000 runs in flight. The limit is a
 * command-line flag only (V8 reads it once, at start), so `wf start` re-executes itself with it:
 * `process.execve` replaces the process image, same pid, same stdio, nothing left to forward or
 * orphan (signals, exit codes and `kill -9` behave as for any process). Node documents it as
 * experimental and as keeping only stdin, stdout and stderr (hence no re-execution under an IPC
 * parent). Where it is missing (Windows, Node before 22.15) or fails, `wf start` runs with V8's
 * defaults.
 *
 * The re-execution also caps glibc's malloc arenas ({@link START_MALLOC_TUNABLES}; the loader reads
 * them at exec, so again only from outside). glibc gives a thread that finds the main arena busy an
 * arena of its own, up to 8 per core; V8's compiler and GC threads each end up with one, holding
 * what they freed (Maglev's and TurboFan's zones) where nothing else reuses it: about 10 MB of the
 * peak with 1,000 runs in flight. Two arenas (the main thread's, and one the others share) keep it
 * off, at no cost in throughput within noise (bench: `wf start` peak RSS and SQLite throughput,
 * A/B). Elsewhere (musl, macOS) the variable means nothing.
 */

/** Semi-space limit in MiB (the new space is two of them): what `node --max-semi-space-size=8` gives. */
export const START_SEMI_SPACE_MB = 8;

const SEMI_SPACE_FLAG = /^--max-semi-space-size(=|$)/;

/** glibc's malloc settings for `wf start` (`GLIBC_TUNABLES` syntax), unless the operator chose any. */
export const START_MALLOC_TUNABLES = 'glibc.malloc.arena_max=2';

/**
 * The environment to re-execute with: `env` plus {@link START_MALLOC_TUNABLES}, unless it sets glibc's
 * malloc itself (a `glibc.malloc.*` tunable, or glibc's older `MALLOC_*` variables).
 * @example startReexecEnv({ PATH: '/bin' }); // { PATH: '/bin', GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }
 */
export function startReexecEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (tunables.includes('glibc.malloc.') || Object.keys(env).some((name) => /^MALLOC_[A-Z_]+$/.test(name))) return env;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${START_MALLOC_TUNABLES}` : START_MALLOC_TUNABLES };
}

/**
 * The argv to re-execute with, or undefined to run as is: not `wf start`, a size already chosen
 * (command line or `NODE_OPTIONS`, e.g. `NODE_OPTIONS=--max-semi-space-size=32` for V8's default
 * back), a debugger attached (`--inspect…`: its session would end), or a parent talking over an
 * IPC channel (its descriptor is not ours to carry across).
 * @example startReexecArgv({ argv: ['node', 'wf', 'start'], execArgv: [], env: {} }); // ['node', '--max-semi-space-size=8', 'wf', 'start']
 */
export function startReexecArgv({
  argv,
  execArgv,
  env,
}: {
  argv: readonly string[];
  execArgv: readonly string[];
  env: NodeJS.ProcessEnv;
}): string[] | undefined {
  // The command is the first argument that is not an option (`wf --debug start` too).
  if (argv.slice(2).find((arg) => !arg.startsWith('-')) !== 'start') return undefined;
  const nodeOptions = (env.NODE_OPTIONS ?? '').split(/\s+/);
  if ([...execArgv, ...nodeOptions].some((flag) => SEMI_SPACE_FLAG.test(flag))) return undefined;
  if ([...execArgv, ...nodeOptions].some((flag) => flag.startsWith('--inspect'))) return undefined;
  if (env.NODE_CHANNEL_FD !== undefined) return undefined;
  const [node = process.execPath, ...rest] = argv;
  return [node, `--max-semi-space-size=${START_SEMI_SPACE_MB}`, ...execArgv, ...rest];
}

/**
 * For `wf start`, re-executes this process with {@link START_SEMI_SPACE_MB} and
 * {@link START_MALLOC_TUNABLES}; returns only if it did not.
 */
export function capStartYoungGeneration(): void {
  const argv = startReexecArgv({ argv: process.argv, execArgv: process.execArgv, env: process.env });
  if (!argv || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, argv, startReexecEnv(process.env));
  } catch {
    // Not replaced (e.g. the binary moved since it started): this process runs on, with V8's defaults.
  }
}
