import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf } from '../helpers/import-edges.js';

/**
 * No import cycles, type-only imports included: a cycle means a type or a function lives in the
 * wrong module (move it below both). Biome's `noImportCycles` (biome.jsonc, `ignoreTypes: false`)
 * says the same while editing; this test is the second line, with its own reading of the imports.
 * Static imports and re-exports count; `import('…')` does not (it loads when the code runs, the
 * sanctioned way to load a heavy part lazily).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = [
  'protocol',
  'api',
  'view',
  'serve',
  'runner-core',
  'cli',
  'tui',
  'web',
  'test',
  'bench',
  'scripts',
  'templates',
];
const SOURCE = /\.(ts|tsx|js|mjs)$/;
const SKIPPED = new Set(['node_modules', 'dist', 'artifacts']);

/** Every source file of the project, as absolute paths. */
function projectFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
      .filter((f) => SOURCE.test(f) && !f.endsWith('.d.ts') && !f.split('/').some((part) => SKIPPED.has(part)))
      .map((f) => join(ROOT, folder, f)),
  );
}

/** The project file a relative specifier names (`./x.js` is `x.ts` or `x.tsx` in the sources), if any. */
function resolveSpecifier(from: string, specifier: string, isFile: (file: string) => boolean): string | undefined {
  const target = resolve(dirname(from), specifier);
  const candidates = [
    target,
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.js$/, '.tsx'),
    target.replace(/\.mjs$/, '.mts'),
  ];
  return candidates.find(isFile);
}

/** `file -> the files it imports statically`, relative imports only. */
function importGraph(files: string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(read(file), file)
      .filter((edge) => !edge.dynamic && edge.specifier.startsWith('.'))
      .map((edge) => resolveSpecifier(file, edge.specifier, (f) => known.has(f)))
      .filter((target): target is string => target !== undefined && target !== file);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one file: each holds at least one cycle. */
function cyclicComponents(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** One shortest cycle through the component's first file, as `a -> b -> a` (breadth-first). */
function oneCycle(graph: Map<string, string[]>, component: string[]): string[] {
  const inside = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!inside.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (cameFrom.has(target)) continue;
      cameFrom.set(target, node);
      queue.push(target);
    }
  }
  return component;
}

/** Each cycle in words: the files of its component, and one path around it. */
function describeCycles(graph: Map<string, string[]>, root: string): string[] {
  return cyclicComponents(graph).map((component) => {
    const name = (file: string): string => relative(root, file);
    return `${component.map(name).join(', ')}: ${oneCycle(graph, component).map(name).join(' -> ')}`;
  });
}

describe('import cycles', () => {
  it('the project has none (type-only imports count)', () => {
    const files = projectFiles();
    expect(files.length).toBeGreaterThan(500);
    const graph = importGraph(files, (file) => readFileSync(file, 'utf8'));
    expect(describeCycles(graph, ROOT)).toEqual([]);
  });

  describe('the checker itself, on virtual files', () => {
    const fixture: Record<string, string> = {
      '/p/a.ts': ["import { b } from './b.js';", 'export const a = b;'].join('\n'),
      // Type-only, and in a multi-line clause: still closes the cycle a -> b -> a.
      '/p/b.ts': ['import type {', '  A,', "} from './a.js';", 'export const b = 1;'].join('\n'),
      // A re-export closes c -> d -> e -> c; e's dynamic import of a does not join the two cycles.
      '/p/c.ts': "export { d } from './d.js';",
      '/p/d.ts': "import './e.js';\nexport const d = 1;",
      '/p/e.tsx': "import type { C } from './c.js';\nconst later = () => import('./a.js');",
      // Commented-out imports, self-imports and imports of files outside the project are no edges.
      '/p/f.ts': "// import { a } from './a.js';\nimport { f } from './f.js';\nimport { x } from '../dist/x.js';",
    };
    const files = Object.keys(fixture);
    const graph = importGraph(files, (file) => fixture[file]!);

    it('finds each cycle once, with a path around it', () => {
      expect(describeCycles(graph, '/p')).toEqual([
        'a.ts, b.ts: a.ts -> b.ts -> a.ts',
        'c.ts, d.ts, e.tsx: c.ts -> d.ts -> e.tsx -> c.ts',
      ]);
    });

    it('reads .js specifiers as the .ts and .tsx sources and leaves out what is not an edge', () => {
      expect(graph.get('/p/d.ts')).toEqual(['/p/e.tsx']);
      expect(graph.get('/p/e.tsx')).toEqual(['/p/c.ts']);
      expect(graph.get('/p/f.ts')).toEqual([]);
    });

    it('finds no cycle once the type moves below both', () => {
      const fixed = {
        ...fixture,
        '/p/b.ts': "import type { A } from './types.js';\nexport const b = 1;",
        '/p/types.ts': 'export type A = 1;',
      };
      const names = Object.keys(fixed);
      const cycles = describeCycles(
        importGraph(names, (file) => fixed[file as keyof typeof fixed]),
        '/p',
      );
      expect(cycles).toEqual(['c.ts, d.ts, e.tsx: c.ts -> d.ts -> e.tsx -> c.ts']);
    });
  });
});
