/** One host `wf init` knows: where its starter lives, where the route goes, how it runs. */
export interface Framework {
  /** The `--framework` value. */
  name: string;
  label: string;
  /** Folder under `templates/`. */
  template: string;
  /** The workflow route, relative to the app. */
  routeFile: string;
  /** Other files the route needs, copied into an existing app too (SvelteKit declares its variables). */
  supportFiles: string[];
  /** Where `wf init` writes WF_TOKEN and friends. */
  envFile: '.dev.vars' | '.env.local' | '.env';
  /** Extra env entries besides WF_TOKEN and WF_RUNNER_URL. */
  env: Record<string, string>;
  /** package.json dependencies that must all be present for an existing app to count as this host. */
  detect: string[];
  devCommand: string;
  devPort: number;
  /** Path of the workflow route on the dev server. */
  routePath: string;
  /** Package that provides `wfkit`'s adapter for this host, for the README and messages. */
  importPath: string;
}

const workers = {
  envFile: '.dev.vars',
  env: { ENVIRONMENT: 'development' },
  devPort: 8787,
  devCommand: 'npm run dev',
} as const;

/** In detection order: the more specific entry first (Hono on Workers before Hono, before a bare Worker). */
export const FRAMEWORKS: readonly Framework[] = [
  {
    name: 'hono-workers',
    label: 'Hono on Cloudflare Workers',
    template: 'hono-workers',
    routeFile: 'src/index.ts',
    supportFiles: [],
    detect: ['hono', 'wrangler'],
    routePath: '/workflow',
    importPath: 'wfkit/hono',
    ...workers,
  },
  {
    name: 'hono',
    label: 'Hono on Node',
    template: 'hono-node',
    routeFile: 'src/app.ts',
    supportFiles: [],
    envFile: '.env',
    env: {},
    detect: ['hono'],
    devCommand: 'npm run dev',
    devPort: 3000,
    routePath: '/workflow',
    importPath: 'wfkit/hono',
  },
  {
    name: 'nextjs',
    label: 'Next.js',
    template: 'nextjs',
    routeFile: 'app/api/workflow/route.ts',
    supportFiles: [],
    envFile: '.env.local',
    env: {},
    detect: ['next'],
    devCommand: 'npm run dev',
    devPort: 3000,
    routePath: '/api/workflow',
    importPath: 'wfkit/nextjs',
  },
  {
    name: 'svelte',
    label: 'SvelteKit',
    template: 'sveltekit',
    routeFile: 'src/routes/api/workflow/+server.ts',
    supportFiles: ['src/env.ts'],
    envFile: '.env.local',
    env: {},
    detect: ['@sveltejs/kit'],
    devCommand: 'npm run dev',
    devPort: 5173,
    routePath: '/api/workflow',
    importPath: 'wfkit/svelte',
  },
  {
    name: 'nuxt',
    label: 'Nuxt',
    template: 'nuxt',
    routeFile: 'server/api/workflow.ts',
    supportFiles: [],
    envFile: '.env.local',
    env: {},
    detect: ['nuxt'],
    devCommand: 'npm run dev',
    devPort: 3000,
    routePath: '/api/workflow',
    importPath: 'wfkit/h3',
  },
  {
    name: 'solidjs',
    label: 'SolidStart',
    template: 'solidstart',
    routeFile: 'src/routes/api/workflow.ts',
    supportFiles: [],
    envFile: '.env',
    env: {},
    detect: ['@solidjs/start'],
    devCommand: 'npm run dev',
    devPort: 5173,
    routePath: '/api/workflow',
    importPath: 'wfkit/solidjs',
  },
  {
    name: 'cloudflare',
    label: 'Cloudflare Worker',
    template: 'cloudflare',
    routeFile: 'src/index.ts',
    supportFiles: [],
    detect: ['wrangler'],
    routePath: '/',
    importPath: 'wfkit/cloudflare',
    ...workers,
  },
];

export function frameworkNamed(name: string): Framework | undefined {
  return FRAMEWORKS.find((f) => f.name === name);
}

/** The host an existing app is built on, from its package.json dependencies. */
export function detectFramework(pkg: {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}): Framework | undefined {
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  return FRAMEWORKS.find((f) => f.detect.every((name) => name in deps));
}
