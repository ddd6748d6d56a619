import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../errors.js';

/** What `wf init` records in the app's package.json under `wfkit`, so `wf dev` can start the app. */
export interface AppDevConfig {
  /** The app's own dev command, run through the shell (`npm run dev`). */
  dev?: string;
  /** The port its dev server listens on. */
  port?: number;
  /** The path of the workflow route on it. */
  route?: string;
}

/** How `wf dev` runs and checks the app; everything optional (no app: the runner alone). */
export interface AppSpec {
  /** The command: an argv (given after `--`, run without a shell) or a package.json string (through the shell). */
  command?: { argv: string[] } | { shell: string };
  /** What the command looks like in messages. */
  label?: string;
  port?: number;
  route?: string;
}

function fail(path: string, message: string): never {
  throw new CliError(2, 'BAD_APP_CONFIG', `Expected ${message} in the "wfkit" field of ${path}.`);
}

/** The `wfkit` field of `<dir>/package.json`, validated; undefined when there is none. */
export function readAppDevConfig(dir: string): AppDevConfig | undefined {
  const path = join(dir, 'package.json');
  if (!existsSync(path)) return undefined;
  let pkg: { wfkit?: unknown };
  try {
    pkg = JSON.parse(readFileSync(path, 'utf8')) as { wfkit?: unknown };
  } catch (error) {
    throw new CliError(1, 'BAD_PACKAGE_JSON', `Expected ${path} to be JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const raw = pkg.wfkit;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    fail(path, `an object like {"dev":"npm run dev","port":3000,"route":"/workflow"}, got ${JSON.stringify(raw)}`);
  const { dev, port, route } = raw as Record<string, unknown>;
  if (dev !== undefined && (typeof dev !== 'string' || dev.trim() === ''))
    fail(path, `"dev" to be a command, got ${JSON.stringify(dev)}`);
  if (port !== undefined && (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535))
    fail(path, `"port" to be a port from 1 to 65535, got ${JSON.stringify(port)}`);
  if (route !== undefined && (typeof route !== 'string' || !route.startsWith('/')))
    fail(path, `"route" to be a path starting with /, got ${JSON.stringify(route)}`);
  return { dev: dev as string | undefined, port: port as number | undefined, route: route as string | undefined };
}

export interface AppFlags {
  /** Words after `--`. */
  argv: string[];
  appPort?: number;
  route?: string;
  /** `--no-app`: ignore package.json's command. */
  app: boolean;
}

/**
 * The app `wf dev` manages: the command after `--` wins over package.json's `wfkit.dev`; `--app-port`
 * and `--route` over its `port` and `route`. `--no-app` keeps the port and route (to check an app
 * started elsewhere) but starts nothing.
 */
export function resolveAppSpec(flags: AppFlags, config: AppDevConfig | undefined): AppSpec {
  const spec: AppSpec = { port: flags.appPort ?? config?.port, route: flags.route ?? config?.route };
  if (flags.argv.length > 0) {
    spec.command = { argv: flags.argv };
    spec.label = flags.argv.join(' ');
  } else if (flags.app && config?.dev) {
    spec.command = { shell: config.dev };
    spec.label = config.dev;
  }
  return spec;
}
