import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every request the runner sends goes through the egress gate (runner-core/egress/): no other
 * runner-core module may open an outbound connection. The one documented exception is the OTLP
 * exporter in runner-core/telemetry/, OpenTelemetry's own package sending to the collector the
 * operator named (it imports no HTTP client of ours, which this test checks too).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Modules whose runtime imports can open a connection, and the names of theirs that do not. */
const CLIENT_MODULES: Record<string, readonly string[]> = {
  undici: ['errors'],
  'node:http': ['createServer', 'Server', 'STATUS_CODES', 'IncomingMessage', 'ServerResponse'],
  'node:https': [],
  'node:http2': [],
  'node:net': ['isIP', 'isIPv4', 'isIPv6', 'BlockList', 'AddressInfo'],
  'node:tls': [],
  'node:dgram': [],
};
const aliases = (name: string): string[] => (name.startsWith('node:') ? [name, name.slice(5)] : [name]);
/**
 * The client module a specifier loads: undici's own files (`undici/lib/…`) and the gate's module of
 * them (egress/undici-parts.ts, which re-exports their names) count as undici.
 */
const clientModule = (specifier: string): string =>
  specifier.startsWith('undici/') || /(^|\/)egress\/undici-parts\.js$/.test(specifier) ? 'undici' : specifier;

/** `import x, { a, b as c } from 'm'` clauses of runtime imports (type-only ones erase). */
const IMPORT = /(?:^|[;\n])\s*import\s+(?!type\s)([\w$\s{},*]*?)\s*from\s*['"]([^'"]+)['"]/g;
const DYNAMIC = /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
/** Global clients: fetch, WebSocket, EventSource, XMLHttpRequest. */
const GLOBAL_CLIENT =
  /(?<![\w$.])(fetch|WebSocket|EventSource|XMLHttpRequest)\s*\(|new\s+(WebSocket|EventSource|XMLHttpRequest)\b/;

/** What in `source` can open an outbound connection, in words (empty when nothing does). */
function outboundUses(source: string): string[] {
  const text = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/(['"`])(?:\\.|(?!\1)[^\\\n])*\1/g, (m) => (m.length < 60 && /^['"][\w@:/.-]+['"]$/.test(m) ? m : '""'));
  const uses: string[] = [];
  for (const [module, harmless] of Object.entries(CLIENT_MODULES)) {
    for (const m of text.matchAll(IMPORT)) {
      if (!aliases(module).includes(clientModule(m[2]!))) continue;
      const clause = m[1]!.trim();
      if (/\*|^[\w$]+\s*(,|$)/.test(clause)) uses.push(`imports all of ${m[2]}`);
      const names = /\{([^}]*)\}/.exec(clause)?.[1]?.split(',') ?? [];
      for (const raw of names) {
        const part = raw.trim();
        if (part === '' || part.startsWith('type ')) continue;
        const name = part.split(/\s+as\s+/)[0]!.trim();
        if (!harmless.includes(name)) uses.push(`imports ${name} from ${m[2]}`);
      }
    }
  }
  for (const m of text.matchAll(DYNAMIC))
    if (Object.keys(CLIENT_MODULES).some((module) => aliases(module).includes(clientModule(m[1]!))))
      uses.push(`loads ${m[1]} dynamically`);
  const global = GLOBAL_CLIENT.exec(text);
  if (global) uses.push(`calls ${global[1] ?? global[2]}`);
  return uses;
}

const files = (readdirSync(join(ROOT, 'runner-core'), { recursive: true }) as string[])
  .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
  .map((f) => join(ROOT, 'runner-core', f));

describe('no way out of the runner but the egress gate', () => {
  it('finds the gate and the rest of runner-core', () => {
    const names = files.map((f) => relative(ROOT, f));
    expect(names).toContain('runner-core/egress/agents.ts');
    expect(names).toContain('runner-core/qstash/delivery/delivery.ts');
    expect(names.length).toBeGreaterThan(50);
  });

  it('lets no runner-core module outside runner-core/egress/ open an outbound connection', () => {
    const found = files
      .filter((f) => !relative(ROOT, f).startsWith('runner-core/egress/'))
      .flatMap((f) => outboundUses(readFileSync(f, 'utf8')).map((use) => `${relative(ROOT, f)} ${use}`));
    expect(found).toEqual([]);
  });

  it('catches each way to open a connection (the checker can fail)', () => {
    expect(outboundUses("import { Agent, errors } from 'undici';")).toEqual(['imports Agent from undici']);
    expect(outboundUses("import { request as send } from 'node:https';")).toEqual(['imports request from node:https']);
    expect(outboundUses("import http from 'http';")).toEqual(['imports all of http']);
    expect(outboundUses("import * as net from 'node:net';")).toEqual(['imports all of node:net']);
    expect(outboundUses("import { connect } from 'node:tls';")).toEqual(['imports connect from node:tls']);
    expect(outboundUses("const u = await import('undici');")).toEqual(['loads undici dynamically']);
    expect(outboundUses("const Agent = require('undici/lib/dispatcher/agent.js');")).toEqual([
      'loads undici/lib/dispatcher/agent.js dynamically',
    ]);
    expect(outboundUses("import { request } from '../egress/undici-parts.js';")).toEqual([
      'imports request from ../egress/undici-parts.js',
    ]);
    expect(outboundUses('const r = await fetch(url);')).toEqual(['calls fetch']);
    expect(outboundUses('const ws = new WebSocket(url);')).toEqual(['calls WebSocket']);
    // Harmless: servers, type imports, undici's error classes, a method named fetch, words in comments.
    expect(
      outboundUses(
        "import { createServer, type Server } from 'node:http';\nimport type { Dispatcher } from 'undici';\nimport { errors } from 'undici';\nimport { errors as e } from '../../egress/undici-parts.js';\nstore.fetch(1);\n// fetch(x)",
      ),
    ).toEqual([]);
  });
});
