import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { workflows } from '../fixtures/workflows.js';

/**
 * The Upstash proof's apps on the hosts with dev servers of their own: the files of a Next.js app
 * and of a Cloudflare Worker, each written the way Upstash's guide for that host writes it, serving
 * the shared workflows (fixtures/workflows.ts, copied in) under `/workflows/<name>` and the step
 * counters at `/counters`; both also serve the fidelity proof's workflows
 * (fixtures/fidelity-workflows.ts, copied in) under `/fidelity/…`, as the Hono app does. They are
 * written into a temp folder and installed from npm there.
 */

const FIXTURES = resolve(import.meta.dirname, '../fixtures');
const UPSTASH_WORKFLOW = '^1.3.3';

export interface HostApp {
  /** Files to write, path -> text (the fixtures are copied besides). */
  files: Record<string, string>;
  /** Shared modules of test/upstash/fixtures copied in: fixture file name -> path in the app. */
  fixtures: Record<string, string>;
  /** Whether the app serves the fidelity proof (`/fidelity/…`, the Hono app's routes). */
  fidelity: boolean;
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
  Object.assign(files, nextjsFidelityRoutes());
  return {
    files,
    fixtures: { 'workflows.ts': 'workflows.ts', 'fidelity-workflows.ts': 'fidelity-workflows.ts' },
    fidelity: true,
    envFile: '.env.local',
    devArgs: (port) => ['--hostname', '127.0.0.1', '--port', String(port)],
  };
}

/**
 * The fidelity proof's routes, as a Next.js app writes them: the tenant guard and the step logging
 * are checks in the route handlers around the SDK's `POST` (the Hono app has them as middleware).
 */
function nextjsFidelityRoutes(): Record<string, string> {
  const from = (depth: number): string => `'${'../'.repeat(depth)}fidelity-workflows'`;
  return {
    'app/fidelity/guarded/[workflow]/route.ts': `import { createWorkflow, serveMany } from '@upstash/workflow/nextjs';
import { admitTenant, guardedWorkflows, TENANT_HEADER } from ${from(4)};

const { POST: handle } = serveMany(guardedWorkflows(createWorkflow));

// A multi-tenant app's guard: a delivery without the tenant header is refused before the SDK sees it.
export async function POST(request: Request) {
  if (!admitTenant(request.headers.get(TENANT_HEADER), new URL(request.url).pathname))
    return new Response('no tenant', { status: 401 });
  return handle(request);
}
`,
    'app/fidelity/ordered/route.ts': `import { serve } from '@upstash/workflow/nextjs';
import { loggedDelivery, ordered } from ${from(3)};

const { POST: handle } = serve(ordered);

// Logs "step finished" once the SDK has answered; the run's next delivery must not begin before.
export function POST(request: Request) {
  return loggedDelivery(request.headers.get('upstash-workflow-runid'), () => handle(request));
}
`,
    'app/fidelity/call-headers/route.ts': `import { serve } from '@upstash/workflow/nextjs';
import { callHeaders } from ${from(3)};

export const { POST } = serve(callHeaders);
`,
    'app/fidelity/call-workflow/route.ts': `import { serve } from '@upstash/workflow/nextjs';
import { callWorkflow } from ${from(3)};

export const { POST } = serve(callWorkflow);
`,
    'app/fidelity/state/route.ts': `import { fidelityState } from ${from(3)};

export function GET() {
  return Response.json(fidelityState());
}
`,
  };
}

/**
 * A Cloudflare Worker: `serve` from '@upstash/workflow/cloudflare', the env bindings (from .dev.vars)
 * passed through; the fidelity proof's routes with the tenant guard and the step logging as checks
 * in the Worker's `fetch` around the SDK's handlers (the Hono app has them as middleware).
 */
export function cloudflareApp(): HostApp {
  const worker = `import { createWorkflow, serve, serveMany } from '@upstash/workflow/cloudflare';
import { countersSnapshot, workflows } from './workflows';
import {
  admitTenant,
  callHeaders,
  callWorkflow,
  fidelityState,
  guardedWorkflows,
  loggedDelivery,
  ordered,
  TENANT_HEADER,
} from './fidelity-workflows';

type Env = Record<string, string | undefined>;
type Handler = { fetch: (request: Request, env: Env) => Promise<Response> };

const routes = new Map<string, Handler>(Object.entries(workflows).map(([name, { route, options }]) => [\`/workflows/\${name}\`, serve(route, options)]));
routes.set('/fidelity/call-headers', serve(callHeaders));
routes.set('/fidelity/call-workflow', serve(callWorkflow));
const orderedHandler = serve(ordered);
// Logs "step finished" once the SDK has answered; the run's next delivery must not begin before.
routes.set('/fidelity/ordered', {
  fetch: (request, env) => loggedDelivery(request.headers.get('upstash-workflow-runid'), () => orderedHandler.fetch(request, env)),
});
const guarded = serveMany(guardedWorkflows(createWorkflow));

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === '/counters') return Response.json(countersSnapshot());
    if (path === '/fidelity/state') return Response.json(fidelityState());
    if (path.startsWith('/fidelity/guarded/')) {
      // A multi-tenant app's guard: a delivery without the tenant header is refused before the SDK sees it.
      if (!admitTenant(request.headers.get(TENANT_HEADER), path)) return new Response('no tenant', { status: 401 });
      return guarded.fetch(request, env);
    }
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
    fixtures: { 'workflows.ts': 'src/workflows.ts', 'fidelity-workflows.ts': 'src/fidelity-workflows.ts' },
    fidelity: true,
    envFile: '.dev.vars',
    devArgs: (port) => ['--ip', '127.0.0.1', '--port', String(port)],
  };
}

/** Writes the host's files and the shared fixtures into `dir`. */
export function writeHostApp(dir: string, host: HostApp): void {
  for (const [path, text] of Object.entries(host.files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const [fixture, path] of Object.entries(host.fixtures)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    copyFileSync(join(FIXTURES, fixture), join(dir, path));
  }
}
