import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsOf, type ImportEdge } from '../helpers/import-edges.js';

/**
 * serve/ and protocol/ must bundle for Cloudflare Workers and other edge runtimes: no runtime
 * import may reach node builtins, native or node-only packages, or the node-only folders.
 * The walk is static (regex over the source), so it needs no build.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Every import edge reachable from `entries`, following relative runtime imports (`.js` -> `.ts`).
 * Type-only edges are recorded but not followed. `read` is injectable so the walker can be tested.
 */
function walk(entries: string[], read: (file: string) => string): ImportEdge[] {
  const seen = new Set<string>();
  const edges: ImportEdge[] = [];
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const edge of importsOf(read(file), file)) {
      edges.push(edge);
      if (!edge.typeOnly && edge.specifier.startsWith('.')) {
        queue.push(resolve(dirname(file), edge.specifier).replace(/\.js$/, '.ts'));
      }
    }
  }
  return edges;
}

const NODE_ONLY_PACKAGES = ['better-sqlite3', 'undici', 'ink', 'react'];
const NODE_ONLY_FOLDERS = ['runner-core', 'cli', 'tui'].map((folder) => join(ROOT, folder) + '/');
const FRAMEWORKS = [
  'hono',
  '@sveltejs/kit',
  'next',
  'h3',
  '@solidjs/start',
  'solid-js',
  'nuxt',
  'nitropack',
  'wrangler',
  '@cloudflare/workers-types',
];

const packageName = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;

/** Why a runtime import is not allowed in the edge-safe graph, or undefined when it is fine. */
function violation(edge: ImportEdge): string | undefined {
  const { specifier } = edge;
  if (edge.typeOnly) return undefined;
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(edge.from), specifier);
    if (NODE_ONLY_FOLDERS.some((folder) => target.startsWith(folder))) return 'reaches a node-only folder';
    return undefined;
  }
  if (specifier.startsWith('node:') || builtinModules.includes(packageName(specifier))) return 'is a node builtin';
  if (NODE_ONLY_PACKAGES.includes(packageName(specifier))) return 'is a node-only package';
  if (FRAMEWORKS.includes(packageName(specifier))) return 'is a framework (import type only)';
  return undefined;
}

function describeViolations(edges: ImportEdge[]): string[] {
  return edges.flatMap((edge) => {
    const why = violation(edge);
    return why ? [`${relative(ROOT, edge.from)} imports '${edge.specifier}', which ${why}`] : [];
  });
}

/** Every source file under a top-level folder (tests and builds aside). */
const sourceFiles = (folder: string): string[] =>
  (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
    .filter(
      (f) =>
        /\.tsx?$/.test(f) &&
        !f.endsWith('.d.ts') &&
        !f.split('/').some((part) => part === 'node_modules' || part === 'dist'),
    )
    .map((f) => join(ROOT, folder, f));

const ENTRIES = [
  join(ROOT, 'serve/index.ts'),
  join(ROOT, 'protocol/index.ts'),
  // The runner API contract: apps (through serve/), the CLI and both dashboards import it.
  ...sourceFiles('api'),
  ...readdirSync(join(ROOT, 'serve/adapters'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(ROOT, 'serve/adapters', f)),
];

describe('edge-safe import graph of serve/, protocol/ and api/', () => {
  const edges = walk(ENTRIES, (file) => readFileSync(file, 'utf8'));

  it('walks the whole graph', () => {
    const files = new Set(edges.map((e) => relative(ROOT, e.from)));
    const adapters = ['hono', 'node', 'svelte', 'nextjs', 'h3', 'solidjs', 'cloudflare'].map(
      (name) => `serve/adapters/${name}.ts`,
    );
    for (const file of [
      'serve/index.ts',
      ...adapters,
      'serve/adapters/shared/node-request.ts',
      'serve/core/handler.ts',
      'serve/core/session.ts',
      'protocol/signing.ts',
      'protocol/validate.ts',
      'serve/client.ts',
      'api/client.ts',
      'api/events.ts',
      'api/parse.ts',
    ]) {
      expect(files).toContain(file);
    }
  });

  it('has no runtime import of node builtins, node-only packages or folders, or frameworks', () => {
    expect(describeViolations(edges)).toEqual([]);
  });

  it('imports at runtime only the two vetted zero-dependency packages (devalue, ms)', () => {
    // devalue (step values that keep Date, Map, Set, BigInt) and ms (durations like "5m") are pure
    // JavaScript with no dependencies of their own; anything else must be argued for here.
    const allowed = new Set(['devalue', 'ms']);
    const packages = edges
      .filter((e) => !e.typeOnly && !e.specifier.startsWith('.') && !allowed.has(e.specifier))
      .map((e) => `${relative(ROOT, e.from)} -> ${e.specifier}`);
    expect(packages).toEqual([]);
    for (const name of allowed) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        dependencies?: object;
      };
      expect(Object.keys(manifest.dependencies ?? {}), name).toEqual([]);
    }
  });

  it('uses .js extensions on every relative import', () => {
    const bad = edges.filter((e) => e.specifier.startsWith('.') && !e.specifier.endsWith('.js'));
    expect(bad).toEqual([]);
  });
});

/**
 * The layers of the runner API (runner-core/ARCHITECTURE.md): `serve/` imports only itself,
 * `protocol/` and the contract (`api/`); the contract imports only `protocol/`; `cli/`, `tui/` and
 * `web/` read runs through the contract, never the store's records. Type-only imports count here:
 * a type is a dependency on who owns the fact.
 */
describe('the runner API contract is the only way to the runner', () => {
  const edgesOf = (folders: string[]): ImportEdge[] =>
    folders.flatMap(sourceFiles).flatMap((file) => importsOf(readFileSync(file, 'utf8'), file));
  const target = (edge: ImportEdge): string => relative(ROOT, resolve(dirname(edge.from), edge.specifier));
  const relativeEdges = (folders: string[]): ImportEdge[] =>
    edgesOf(folders).filter((e) => e.specifier.startsWith('.'));
  const show = (e: ImportEdge): string => `${relative(ROOT, e.from)} imports '${e.specifier}'`;

  it('keeps cli/, tui/, web/, view/ and serve/ away from runner-core/store (type-only imports included)', () => {
    const bad = relativeEdges(['serve', 'cli', 'tui', 'web', 'view']).filter((e) =>
      target(e).startsWith('runner-core/store'),
    );
    expect(bad.map(show)).toEqual([]);
  });

  it('lets serve/ import only serve/, protocol/ and api/', () => {
    const bad = relativeEdges(['serve']).filter((e) => !/^(serve|protocol|api)\//.test(target(e)));
    expect(bad.map(show)).toEqual([]);
  });

  it('lets api/ import only api/ and protocol/', () => {
    const bad = relativeEdges(['api']).filter((e) => !/^(protocol|api)\//.test(target(e)));
    expect(bad.map(show)).toEqual([]);
  });
});

describe('the import walker itself', () => {
  // Virtual files (never on disk) under the real root, so the folder rules apply to them.
  const at = (path: string): string => join(ROOT, 'virtual', path);
  const fixture: Record<string, string> = {
    [at('serve/index.ts')]: [
      "import type { IncomingMessage } from 'node:http';",
      "import type { Context } from 'hono';",
      "export type { Options } from '../../runner-core/types.js';",
      "import { helper } from './helper.js';",
      'export function serve(a: string = "x") { return a.split(","); }',
      "export * from './more.js';",
    ].join('\n'),
    [at('serve/helper.ts')]: [
      'import {',
      '  createHash,',
      '  type Hash,',
      "} from 'node:crypto';",
      "import { Hono } from 'hono';",
      "// import { fake } from 'undici';",
      "const db = await import('better-sqlite3');",
      'export const helper = 1;',
    ].join('\n'),
    [at('serve/more.ts')]:
      "import 'ink';\nexport { store } from '../../runner-core/store.js';\nimport fs from 'fs/promises';",
    [join(ROOT, 'runner-core/store.ts')]: 'export const store = 1;',
  };
  const read = (file: string): string => {
    const text = fixture[file];
    if (text === undefined) throw new Error(`fixture has no ${file}`);
    return text;
  };
  const edges = walk([at('serve/index.ts')], read);
  const found = edges.filter((e) => violation(e) !== undefined).map((e) => `${e.specifier} (${violation(e)})`);

  it('detects forbidden runtime imports across multi-line, bare, dynamic and re-export forms', () => {
    expect(found).toEqual(
      expect.arrayContaining([
        'node:crypto (is a node builtin)',
        'hono (is a framework (import type only))',
        'better-sqlite3 (is a node-only package)',
        'ink (is a node-only package)',
        '../../runner-core/store.js (reaches a node-only folder)',
        'fs/promises (is a node builtin)',
      ]),
    );
  });

  it('ignores type-only imports of builtins and frameworks (not followed either), and commented-out imports', () => {
    expect(found).not.toContain('node:http (is a node builtin)');
    expect(edges.find((e) => e.specifier === 'hono' && e.from === at('serve/index.ts'))?.typeOnly).toBe(true);
    expect(edges.some((e) => e.specifier === 'undici')).toBe(false);
  });

  it('lets a type-only re-export from a node-only folder through (erased at build time)', () => {
    expect(found).not.toContain('../../runner-core/types.js (reaches a node-only folder)');
    expect(edges.some((e) => e.specifier === '../../runner-core/types.js' && e.typeOnly)).toBe(true);
  });

  it('does not mistake a function body for an import clause', () => {
    expect(importsOf('export function f(a = "x") { return 1; }\nimport { y } from "./y.js";', '/f.ts')).toEqual([
      { from: '/f.ts', specifier: './y.js', typeOnly: false },
    ]);
  });
});
