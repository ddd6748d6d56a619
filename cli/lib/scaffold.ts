import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { CliError } from '../errors.js';
import { detectFramework, FRAMEWORKS, type Framework } from './frameworks.js';
import { assertWritesInside, shellQuote } from './inside-target.js';
import { fileSpecs, type LocalPackages } from './local-packages.js';
import { generateToken } from './token.js';

export interface ScaffoldOptions {
  /** Absolute path of the app (created when missing). */
  dir: string;
  /** The host; when absent, detected from the existing app's package.json. */
  framework?: Framework;
  /** Overwrite files and env entries that exist. */
  force?: boolean;
  /** @default the `templates/` folder shipped beside the CLI */
  templatesDir?: string;
  /** @default a new random token */
  token?: string;
  /** The tarballs to depend on (`--wfkit-from`, or a checkout's): `file:` specs instead of the registry's `^0.1.0`. */
  packages?: LocalPackages;
}

export interface ScaffoldResult {
  framework: Framework;
  /** `new`: the whole starter was copied; `existing`: only the route (and what it needs) was added. */
  mode: 'new' | 'existing';
  /** Paths relative to the app, in the order written. */
  written: string[];
  /** Files that existed and were left alone (no --force). */
  skipped: string[];
  envFile: string;
  /** Env entries that existed and were left alone. */
  envKept: string[];
  /** The WF_TOKEN the app now has (generated, or the one it already had). */
  token: string;
  /** `wrote`: package.json got `"wfkit": { dev, port, route }` for `wf dev`; `kept`: it had one (no --force). */
  devConfig: 'wrote' | 'kept';
  /** With local packages: the `file:` specs, written into a new app's package.json, shown to install in an existing one. */
  specs?: { wfkit: string; 'wfkit-cli': string };
}

/** Build output, installs and local state: never part of a starter, even when someone ran it in place. */
const NOT_TEMPLATE = new Set([
  'node_modules',
  '.next',
  '.svelte-kit',
  '.nuxt',
  '.output',
  '.wrangler',
  '.wf',
  'dist',
  'build',
  '.env',
  '.env.local',
  '.dev.vars',
  'package-lock.json',
]);

/** The `templates/` folder of this package, from source (`cli/lib`) or from the build (`dist/cli/lib`). */
export function findTemplatesDir(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from, i = 0; i < 5; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, 'templates')) && existsSync(join(dir, 'package.json'))) return join(dir, 'templates');
  }
  throw new CliError(
    1,
    'NO_TEMPLATES',
    `Cannot find the templates folder above ${from}; is the wfkit package complete?`,
  );
}

/** The app's package.json, or undefined when `dir` is not an app yet. */
export function readAppPackage(
  dir: string,
): { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } | undefined {
  const path = join(dir, 'package.json');
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(1, 'BAD_PACKAGE_JSON', `Expected ${path} to be JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function templateFiles(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_TEMPLATE.has(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? templateFiles(root, path) : [relative(root, path)];
  });
}

/** npm drops `.gitignore` from published packages, so templates ship `_gitignore`. */
const targetName = (file: string): string => file.replace(/(^|\/)_gitignore$/, '$1.gitignore');

const appName = (dir: string): string =>
  basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '') || 'wfkit-app';

/** Adds the entries the env file lacks (all of them with `force`), keeping every other line. */
function writeEnv(
  path: string,
  wanted: Record<string, string>,
  force: boolean,
): { kept: string[]; values: Record<string, string> } {
  let text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const present = parseEnv(text);
  const kept: string[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    const line = new RegExp(`^[ \\t]*(?:export[ \\t]+)?${key}[ \\t]*=.*$`, 'm');
    if (!(key in present) || !line.test(text))
      text += `${text === '' || text.endsWith('\n') ? '' : '\n'}${key}=${value}\n`;
    else if (force) text = text.replace(line, `${key}=${value}`);
    else kept.push(key);
  }
  writeFileSync(path, text, { mode: 0o600 });
  return { kept, values: { ...wanted, ...Object.fromEntries(kept.map((key) => [key, present[key]!])) } };
}

/**
 * Creates a new app from the host's starter, or adds the workflow route and env entries to an
 * existing app. Never overwrites a file or an env entry unless `force`; reports what it left alone.
 * @example scaffold({ dir: "/tmp/my-app", framework: frameworkNamed("nextjs") })
 */
export function scaffold(options: ScaffoldOptions): ScaffoldResult {
  const { dir, force = false } = options;
  const pkg = readAppPackage(dir);
  const framework = options.framework ?? (pkg && detectFramework(pkg));
  if (!framework) {
    const names = FRAMEWORKS.map((f) => f.name).join(', ');
    throw new CliError(
      2,
      'UNKNOWN_FRAMEWORK',
      pkg
        ? `Cannot tell the framework of the app in ${dir} from its package.json: pass --framework (${names}).`
        : `Pass --framework (${names}).`,
    );
  }
  const source = join(options.templatesDir ?? findTemplatesDir(), framework.template);
  const files = pkg ? [framework.routeFile, ...framework.supportFiles] : templateFiles(source);
  const written: string[] = [];
  const skipped: string[] = [];
  // Every path written below is checked first, so a link out of the app stops init before any write.
  const toWrite = files.filter((file) => force || !existsSync(join(dir, targetName(file))));
  for (const target of [...toWrite.map(targetName), framework.envFile, 'package.json']) assertWritesInside(dir, target);
  for (const file of files) {
    const target = targetName(file);
    const path = join(dir, target);
    if (!toWrite.includes(file)) {
      skipped.push(target);
      continue;
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, readFileSync(join(source, file), 'utf8').replaceAll('{{name}}', appName(dir)));
    written.push(target);
  }
  const wanted = {
    WF_TOKEN: options.token ?? generateToken(),
    WF_RUNNER_URL: 'http://127.0.0.1:7766',
    ...framework.env,
  };
  const env = writeEnv(join(dir, framework.envFile), wanted, force);
  const specs = options.packages && fileSpecs(options.packages, dir);
  // A new app's dependencies are the starter's; an existing app's are its own (the report says what to install).
  const devConfig = updatePackageJson(join(dir, 'package.json'), framework, force, pkg ? undefined : specs);
  return {
    framework,
    mode: pkg ? 'existing' : 'new',
    written,
    skipped,
    envFile: framework.envFile,
    envKept: env.kept,
    token: env.values.WF_TOKEN!,
    devConfig,
    specs,
  };
}

/**
 * Writes `"wfkit": { "dev", "port", "route" }` into the app's package.json, so a bare `wf dev`
 * starts the app and checks its route, and, given `specs`, points the starter's `wfkit` and
 * `wfkit-cli` dependencies at local tarballs. Keeps an existing `wfkit` field unless `force`, and
 * the file's own indentation.
 */
function updatePackageJson(
  path: string,
  framework: Framework,
  force: boolean,
  specs?: { wfkit: string; 'wfkit-cli': string },
): 'wrote' | 'kept' {
  const text = readFileSync(path, 'utf8');
  const pkg = JSON.parse(text) as {
    wfkit?: unknown;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const devConfig = pkg.wfkit !== undefined && !force ? 'kept' : 'wrote';
  if (devConfig === 'wrote')
    pkg.wfkit = { dev: framework.devCommand, port: framework.devPort, route: framework.routePath };
  if (specs) {
    pkg.dependencies = { ...pkg.dependencies, wfkit: specs.wfkit };
    pkg.devDependencies = { ...pkg.devDependencies, 'wfkit-cli': specs['wfkit-cli'] };
  }
  if (devConfig === 'kept' && !specs) return devConfig;
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? '  ';
  writeFileSync(path, JSON.stringify(pkg, null, indent) + '\n');
  return devConfig;
}

/** How the app gets the packages: its own `npm install`, or the two packages (from the registry, or the local tarballs). */
function installLines(result: ScaffoldResult): string[] {
  if (result.mode === 'new') return ['  npm install'];
  const [sdk, cli] = result.specs
    ? [shellQuote(result.specs.wfkit), shellQuote(result.specs['wfkit-cli'])]
    : ['wfkit', 'wfkit-cli'];
  return [
    `  npm install ${sdk}                # what the route imports`,
    `  npm install --save-dev ${cli} # the runner and \`wf\`, for development`,
  ];
}

/** What `wf init` prints after scaffolding: what happened, then the exact commands to run. */
export function report(result: ScaffoldResult, shownDir: string): string[] {
  const { framework: f } = result;
  const url = `http://localhost:${f.devPort}${f.routePath}`;
  const lines = [`wf init: ${result.mode === 'new' ? 'created' : 'added to'} a ${f.label} app in ${shownDir}`];
  for (const file of result.written) lines.push(`  wrote ${file}`);
  for (const file of result.skipped) lines.push(`  left alone ${file} (exists; --force overwrites it)`);
  const added = Object.keys({ WF_TOKEN: 1, WF_RUNNER_URL: 1, ...f.env }).filter((key) => !result.envKept.includes(key));
  if (added.length > 0)
    lines.push(
      `  wrote ${added.join(', ')} to ${result.envFile}${added.includes('WF_TOKEN') ? ' (WF_TOKEN is new and random)' : ''}`,
    );
  if (result.envKept.length > 0)
    lines.push(`  kept ${result.envKept.join(', ')} in ${result.envFile} (--force replaces)`);
  if (result.devConfig === 'wrote')
    lines.push(
      `  wrote "wfkit": { dev, port: ${f.devPort}, route: "${f.routePath}" } to package.json (how \`wf dev\` starts and checks the app)`,
    );
  else lines.push('  kept the "wfkit" field of package.json (--force replaces)');
  if (result.mode === 'existing' && result.skipped.includes(f.routeFile)) {
    lines.push(
      `  add the route yourself: see "${f.label}" under Frameworks in the wfkit README (import { serve } from "${f.importPath}")`,
    );
  }
  if (result.specs && result.mode === 'new')
    lines.push(
      `  wrote dependencies wfkit (${result.specs.wfkit}) and wfkit-cli (${result.specs['wfkit-cli']}): the local tarballs, as the packages are not on the npm registry yet`,
    );
  lines.push('', 'Next:');
  if (shownDir !== '.') lines.push(`  cd ${shellQuote(shownDir)}`);
  lines.push(...installLines(result));
  lines.push(
    `  npx wfkit dev              # the runner and the app (${f.devCommand}), one command; --tunnel makes it public`,
  );
  lines.push(`  curl -X POST ${url} -H 'content-type: application/json' -d '{"text":"hello"}'`);
  return lines;
}
