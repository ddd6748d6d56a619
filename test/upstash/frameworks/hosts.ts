import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { workflows } from '../fixtures/workflows.js';

/**
 * The Upstash proof's apps on the hosts with dev servers of their own: the files of a Next.js app
 * and of a Cloudflare Worker, each written the way Upstash's guide for that host writes it, serving
 * the shared workflows (fixtures/workflows.ts, copied in) under `/workflows/<name>` and the step
 * counters at `/counters`. They are written into a temp folder and installed from npm there.
 */

const FIXTURES = resolve(import.meta.dirname, '../fixtures');
const UPSTASH_WORKFLOW = '^1.3.3';

export interface HostApp {
  /** Files to write, path -> text (workflows.ts is copied besides). */
  files: Record<string, string>;
  /** Where the shared workflows module goes. */
  workflowsPath: string;
  /** The env file the host's dev server reads. */
  envFile: string;
  /** `npm run dev --` arguments binding 127.0.0.1:<port>. */
  devArgs: (port: number) => string[];
}

const json = (value: unknown): string => JSON.stringify(value, null, 2) + '\n';

/** Next.js (App Router): one `route.ts` per workflow, `export const { POST } = serve(…)` as the docs show. */
export function nextjsApp(): HostApp {
  const files: Record<string, string> = {
    'package.json': json({
      name: 'upstash-nextjs-proof',
      private: true,
      type: 'module',
      scripts: { dev: 'next dev' },
      dependencies: {
        '@upstash/workflow': UPSTASH_WORKFLOW,
        next: '^16.4.6',
        react: '^19.3.1',
        'react-dom': '^19.3.1',
      },
      devDependencies: { '@types/node': '^24.0.0', '@types/react': '^19.3.0', typescript: '^5.9.3' },
    }),
    'next.config.mjs': 'export default {};\n',
    'tsconfig.json': json({
      compilerOptions: {
        target: 'ES2022',
        lib: ['dom', 'dom.iterable', 'esnext'],
        allowJs: true,
        skipLibCheck: true,
        strict: true,
        noEmit: true,
        module: 'esnext',
        esModuleInterop: true,
        moduleResolution: 'bundler',
        resolveJsonModule: true,
        isolatedModules: true,
        jsx: 'react-jsx',
        plugins: [{ name: 'next' }],
      },
      include: ['next-env.d.ts', '**/*.ts', '**/*.tsx'],
      exclude: ['node_modules'],
    }),
    'app/counters/route.ts':
      "import { countersSnapshot } from '../../workflows';\n\nexport function GET() {\n  return Response.json(countersSnapshot());\n}\n",
  };
  for (const name of Object.keys(workflows)) {
    files[`app/workflows/${name}/route.ts`] = [
      "import { serve } from '@upstash/workflow/nextjs';",
      "import { workflows } from '../../../workflows';",
      '',
      `const { route, options } = workflows['${name}']!;`,
      'export const { POST } = serve(route, options);',
      '',
    ].join('\n');
  }
  return {
    files,
    workflowsPath: 'workflows.ts',
    envFile: '.env.local',
    devArgs: (port) => ['--hostname', '127.0.0.1', '--port', String(port)],
  };
}

/** A Cloudflare Worker: `serve` from '@upstash/workflow/cloudflare', the env bindings (from .dev.vars) passed through. */
export function cloudflareApp(): HostApp {
  const worker = `import { serve } from '@upstash/workflow/cloudflare';
import { countersSnapshot, workflows } from './workflows';

const routes = new Map(Object.entries(workflows).map(([name, { route, options }]) => [\`/workflows/\${name}\`, serve(route, options)]));

export default {
  async fetch(request: Request, env: Record<string, string | undefined>): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === '/counters') return Response.json(countersSnapshot());
    const handler = routes.get(path);
    return handler ? handler.fetch(request, env) : new Response('not found', { status: 404 });
  },
};
`;
  return {
    files: {
      'package.json': json({
        name: 'upstash-worker-proof',
        private: true,
        type: 'module',
        scripts: { dev: 'wrangler dev --env-file .dev.vars' },
        dependencies: { '@upstash/workflow': UPSTASH_WORKFLOW },
        devDependencies: { '@cloudflare/workers-types': '^5.20261117.1', typescript: '^5.9.3', wrangler: '^4.164.0' },
      }),
      'wrangler.jsonc': json({
        name: 'upstash-worker-proof',
        main: 'src/index.ts',
        compatibility_date: '2026-11-01',
        compatibility_flags: ['nodejs_compat'],
      }),
      'src/index.ts': worker,
    },
    workflowsPath: 'src/workflows.ts',
    envFile: '.dev.vars',
    devArgs: (port) => ['--ip', '127.0.0.1', '--port', String(port)],
  };
}

/** Writes the host's files and the shared workflows into `dir`. */
export function writeHostApp(dir: string, host: HostApp): void {
  for (const [path, text] of Object.entries(host.files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(dirname(join(dir, host.workflowsPath)), { recursive: true });
  copyFileSync(join(FIXTURES, 'workflows.ts'), join(dir, host.workflowsPath));
}
