/**
 * The import statements of one source file, read statically (regex over the text, no build), for
 * the tests that check the import graph: the edge-safe walk (test/package/import-graph.test.ts)
 * and the cycle check (test/package/import-cycles.test.ts).
 */

export interface ImportEdge {
  from: string;
  specifier: string;
  /** `import type` / `export type`: erased at compile time, never loaded. */
  typeOnly: boolean;
  /** `import('y')`: loaded when the code runs, not when the module loads. */
  dynamic?: true;
}

// `import x from 'y'`, `import type { A } from 'y'`, `export { a } from 'y'`, `export * as n from 'y'`.
// The clause allows only identifier-ish characters, so a `export function f(...)` never spans to a later `from`.
const FROM = /(?:^|[;\n])\s*(import|export)\s+(type\s+)?[\w$\s{},*]*?\s*from\s*['"]([^'"]+)['"]/g;
const BARE = /(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Static, bare and dynamic imports and re-exports of `source` (the file `from`); comments are skipped. */
export function importsOf(source: string, from: string): ImportEdge[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const edges: ImportEdge[] = [];
  for (const m of text.matchAll(FROM)) edges.push({ from, specifier: m[3]!, typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(BARE)) edges.push({ from, specifier: m[1]!, typeOnly: false });
  for (const m of text.matchAll(DYNAMIC)) edges.push({ from, specifier: m[1]!, typeOnly: false, dynamic: true });
  return edges;
}
