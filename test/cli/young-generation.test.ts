import { describe, expect, it } from 'vitest';
import {
  START_MALLOC_TUNABLES,
  START_SEMI_SPACE_MB,
  startReexecArgv,
  startReexecEnv,
} from '../../cli/lib/young-generation.js';

const FLAG = `--max-semi-space-size=${START_SEMI_SPACE_MB}`;
const reexec = (argv: string[], execArgv: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  startReexecArgv({ argv: ['/bin/node', '/pkg/wf', ...argv], execArgv, env });

describe("wf start's young generation", () => {
  it('re-executes `wf start` with the semi-space flag first, keeping node flags and arguments in order', () => {
    expect(reexec(['start', '--port', '0'])).toEqual(['/bin/node', FLAG, '/pkg/wf', 'start', '--port', '0']);
    expect(reexec(['--debug', 'start'], ['--enable-source-maps'])).toEqual([
      '/bin/node',
      FLAG,
      '--enable-source-maps',
      '/pkg/wf',
      '--debug',
      'start',
    ]);
  });

  it('leaves every other command alone, and `start` as an argument of another', () => {
    for (const argv of [[], ['dev'], ['runs', 'start'], ['--help'], ['trigger', 'start']])
      expect(reexec(argv)).toBeUndefined();
  });

  it('never re-executes a process that has the flag (no loop), nor one sized by the operator', () => {
    const again = reexec(['start'])!;
    expect(
      startReexecArgv({ argv: ['/bin/node', '/pkg/wf', 'start'], execArgv: [again[1]!], env: {} }),
    ).toBeUndefined();
    expect(reexec(['start'], ['--max-semi-space-size=32'])).toBeUndefined();
    expect(reexec(['start'], [], { NODE_OPTIONS: '--enable-source-maps  --max-semi-space-size=2' })).toBeUndefined();
  });

  it('runs as is under a debugger or with an IPC channel to its parent', () => {
    expect(reexec(['start'], ['--inspect=9229'])).toBeUndefined();
    expect(reexec(['start'], [], { NODE_OPTIONS: '--inspect-brk' })).toBeUndefined();
    expect(reexec(['start'], [], { NODE_CHANNEL_FD: '3' })).toBeUndefined();
  });

  it("re-executes with glibc's malloc tunables added to the environment's own", () => {
    expect(startReexecEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GLIBC_TUNABLES: START_MALLOC_TUNABLES });
    expect(startReexecEnv({ GLIBC_TUNABLES: 'glibc.rtld.nns=2' }).GLIBC_TUNABLES).toBe(
      `glibc.rtld.nns=2:${START_MALLOC_TUNABLES}`,
    );
  });

  it("leaves glibc's malloc as the operator set it", () => {
    for (const env of [
      { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' },
      { GLIBC_TUNABLES: 'glibc.rtld.nns=2:glibc.malloc.mmap_threshold=0' },
      { MALLOC_ARENA_MAX: '4' },
      { MALLOC_MMAP_THRESHOLD_: '131072' },
    ])
      expect(startReexecEnv(env)).toEqual(env);
  });
});
