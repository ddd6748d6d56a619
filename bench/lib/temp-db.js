// A fresh temporary directory for one SQLite file, removed on cleanup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempDbPath(label) {
  const dir = mkdtempSync(join(tmpdir(), `wfkit-bench-${label}-`));
  return { path: join(dir, 'bench.db'), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
