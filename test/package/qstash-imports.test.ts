import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The QStash engine is a part of the runner beside the core store (issue 19): `store/` never
 * imports `qstash/` (the engine's stores are built beside the store, qstash/stores.ts), and the
 * engine's own modules import each other without a cycle (invoke ↔ publish was one), type imports
 * included. Static (regex over the source), like import-graph.test.ts.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FROM = /(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?[\w$\s{},*]*?\s*from\s*['"](\.[^'"]+)['"]/g;

/** Relative imports of every .ts file under `folder`, as absolute .ts paths. */
function importsUnder(folder: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of readdirSync(join(ROOT, folder))) {
    if (!name.endsWith('.ts')) continue;
    const file = join(ROOT, folder, name);
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    graph.set(
      file,
      [...text.matchAll(FROM)].map((m) => resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts')),
    );
  }
  return graph;
}

/** One cycle of `graph` (as file names), or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle.map((f) => relative(ROOT, f));
  }
  return undefined;
}

describe('the QStash engine beside the core store', () => {
  it('store/ imports nothing from qstash/', () => {
    const qstash = join(ROOT, 'runner-core/qstash') + '/';
    const reaching = [...importsUnder('runner-core/store')].flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith(qstash)).map((t) => `${relative(ROOT, file)} -> ${relative(ROOT, t)}`),
    );
    expect(reaching).toEqual([]);
  });

  it('qstash/ has no import cycle', () => {
    expect(findCycle(importsUnder('runner-core/qstash'))).toBeUndefined();
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
        ]),
      ),
    ).toEqual(['a', 'b', 'a']);
  });
});
