import { configDefaults, defineConfig } from 'vitest/config';

/** Suites with a project of their own below; the others leave them out. */
const OWN_PROJECTS = ['test/frameworks/**', 'test/upstash/frameworks/**', 'test/fuzz/**', 'test/chaos/**'];
const E2E = ['test/**/*.e2e.test.ts', 'test/**/*.e2e.test.tsx'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only makes the e2e suites (child processes, ports) contend.
    maxWorkers: 2,
    // CI reads the counts from the JSON report (.ci/run prints "N passed, N failed").
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.ci/test-results.json' },
    // Once before any project: installs (as root) or names the system programs the suites drive.
    globalSetup: ['test/setup/global-setup.ts'],
    projects: [
      // Projects inherit the root config by merging arrays, so each names its own files.
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...configDefaults.exclude, ...OWN_PROJECTS, ...E2E],
        },
      },
      // Real ports, processes, tmux and Chromium against a built dist/ (`npm run build` first):
      // `vitest run --project unit` stays a quick loop; both share the two workers in `npm test`.
      { extends: true, test: { name: 'e2e', include: E2E, exclude: [...configDefaults.exclude, ...OWN_PROJECTS] } },
      {
        extends: true,
        // The proof on the real frameworks (wfkit's starters, and unchanged Upstash Workflow apps on
        // Next.js and a Cloudflare Worker): installs and dev servers on fixed ports, so one host
        // at a time (no file parallelism here); the unit project keeps the other worker busy.
        test: {
          name: 'frameworks',
          include: ['test/frameworks/**/*.e2e.test.ts', 'test/upstash/frameworks/**/*.e2e.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 900_000,
        },
      },
      {
        extends: true,
        // Seeded fuzz (malformed requests) and chaos (kills, outages, injected faults) against real
        // processes: one file at a time, since each spawns runners and apps and some count on timing
        // (leases, drive timeouts); WF_FUZZ_SEED replays a printed seed.
        test: {
          name: 'fuzz-chaos',
          include: ['test/fuzz/**/*.test.ts', 'test/chaos/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
