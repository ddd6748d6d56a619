import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers than that only makes the e2e suites (child processes, ports) contend.
    maxWorkers: 2,
    // CI reads the counts from the JSON report (.ci/run prints "N passed, N failed").
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: '.ci/test-results.json' },
  },
});
