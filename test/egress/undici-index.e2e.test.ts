import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * What `wf start` loads of undici: its parts (runner-core/egress/undici-parts.ts), never its index,
 * which brings all of undici (about 13 MB of a runner's memory). Against the built dist/.
 */
describe("wf start's modules and undici", () => {
  it("load undici's parts, not its index", () => {
    const script = `
      await import(${JSON.stringify(`${ROOT}/dist/cli/lib/production-runner.js`)});
      const { createRequire } = await import('node:module');
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/undici/'));
      process.stdout.write(JSON.stringify(loaded.map((f) => f.slice(f.lastIndexOf('/undici/') + 1))));
    `;
    const loaded = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as string[];
    expect(loaded).toContain('undici/lib/dispatcher/agent.js');
    expect(loaded).not.toContain('undici/index.js');
  });
});
