import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Store } from '../../runner-core/store/types.js';
import { describeWaitStore } from './qstash-waits-suite.js';

const stores: Store[] = [];
const dir = mkdtempSync(join(tmpdir(), 'wf-qstash-waits-'));
let files = 0;
let lastFile = '';
afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function open(path: string): Promise<Store> {
  const store = openSqliteStore(path);
  stores.push(store);
  return store;
}

describeWaitStore('sqlite memory', () => open(':memory:'));
describeWaitStore('sqlite file', () => open((lastFile = join(dir, `${++files}.db`))), { peer: () => open(lastFile) });
