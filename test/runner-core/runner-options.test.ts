import { describe, expect, it } from 'vitest';
import { LOOPBACK_ORIGINS } from '../../runner-core/egress/origins.js';
import { resolveRunnerOptions, RUNNER_DEFAULTS } from '../../runner-core/runner-options.js';
import type { Store } from '../../runner-core/store/types.js';
import { DEFAULT_UNREACHABLE_POLICY } from '../../runner-core/drive/unreachable.js';

const store = {} as Store;

/** Runner options resolved once: every default in one place, what can be wrong checked there. */
describe('resolveRunnerOptions', () => {
  it('applies every default, an option passed as undefined included', () => {
    const resolved = resolveRunnerOptions({ store, tokens: ['t'], leaseMs: undefined, concurrency: undefined });
    expect(resolved).toMatchObject({ ...RUNNER_DEFAULTS, allowedOrigins: LOOPBACK_ORIGINS, now: Date.now });
    expect(resolved.unreachable).toEqual(DEFAULT_UNREACHABLE_POLICY);
  });

  it('keeps what was given, and fills the rest of a partial unreachable policy', () => {
    const resolved = resolveRunnerOptions({
      store,
      tokens: ['t'],
      leaseMs: 5_000,
      pollMs: 50,
      retention: 60_000,
      unreachable: { horizonMs: 1_000 },
    });
    expect(resolved).toMatchObject({ leaseMs: 5_000, pollMs: 50, retention: 60_000, concurrency: 256 });
    expect(resolved.unreachable.horizonMs).toBe(1_000);
    expect(resolved.unreachable.baseMs).toBe(DEFAULT_UNREACHABLE_POLICY.baseMs);
  });

  it('is idempotent: resolving resolved options changes nothing', () => {
    const once = resolveRunnerOptions({ store, tokens: ['t'], leaseMs: 5_000 });
    expect(resolveRunnerOptions(once)).toEqual(once);
  });

  it.each([-1, 1.5, Number.NaN])('refuses a retention of %s, naming the option', (retention) => {
    expect(() => resolveRunnerOptions({ store, tokens: ['t'], retention })).toThrow(
      /Expected `retention` to be a whole number of milliseconds/,
    );
  });
});
