import type { DevReporter } from './dev-session.js';
import type { CliIO } from './io.js';
import type { Tunnel } from './tunnel.js';
import {
  isUpstashApp,
  UPSTASH_PROCESS_ONLY_ENV,
  upstashAppEnv,
  upstashEnvFile,
  writeUpstashEnv,
} from './upstash-app.js';
import type { ResolvedUpstashKeys } from './upstash-keys.js';

export interface UpstashDevOptions {
  io: CliIO;
  pkg: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } | undefined;
  report: DevReporter;
  runnerUrl: string;
  token: string;
  keys?: ResolvedUpstashKeys;
  tunnel?: Tunnel;
  appPort?: number;
  /** `--write-upstash-env`: put the values in the app's env file, not only in what `wf dev` prints. */
  write: boolean;
  /** `wf dev` starts the app (its dev command), which then gets the values in its environment. */
  startsApp?: boolean;
}

/**
 * `wf dev` for an app built on `@upstash/workflow`: says which values point it at this runner
 * (and writes them into its env file with `--write-upstash-env`), and returns what the app `wf dev`
 * starts gets in its environment. Undefined for any other app.
 */
export function reportUpstashApp(options: UpstashDevOptions): { processEnv: Record<string, string> } | undefined {
  const { io, pkg, report } = options;
  if (!isUpstashApp(pkg)) return undefined;
  const workflowUrl =
    options.tunnel?.url ?? (options.appPort !== undefined ? `http://localhost:${options.appPort}` : undefined);
  const vars = upstashAppEnv({
    runnerUrl: options.runnerUrl,
    token: options.token,
    keys: options.keys?.keys,
    workflowUrl,
  });
  report.info(
    `an Upstash Workflow app: this runner serves the QStash API it calls. Its variables${options.keys ? ` (signing keys from ${options.keys.source})` : ''}:`,
  );
  for (const [name, value] of Object.entries(vars)) report.info(`  ${name}=${value}`);
  if (!options.keys)
    report.warn(
      "the remote runner's signing keys are unknown here: give the app its QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY",
    );
  if (options.write) {
    const file = upstashEnvFile(pkg);
    const merge = writeUpstashEnv(io.cwd, file, vars);
    const parts = [
      merge.added.length > 0 && `added ${merge.added.join(', ')}`,
      merge.replaced.length > 0 && `replaced ${merge.replaced.join(', ')} (old lines kept as comments)`,
      merge.unchanged.length > 0 && `${merge.unchanged.join(', ')} already set`,
    ].filter(Boolean);
    report.info(`${file}: ${parts.join('; ')}`);
  } else {
    const where = options.startsApp ? 'the app wf dev starts gets them in its environment' : 'give them to the app';
    report.info(`${where}; --write-upstash-env writes them into ${upstashEnvFile(pkg)}`);
  }
  return { processEnv: { ...vars, ...UPSTASH_PROCESS_ONLY_ENV } };
}
