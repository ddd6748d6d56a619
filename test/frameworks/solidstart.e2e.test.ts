import { describeHost, npmScript } from './host-suite.js';

const bind = (port: number): string[] => ['--host', '127.0.0.1', '--port', String(port), '--strictPort'];

describeHost({
  framework: 'solidjs',
  dev: ({ app }) => npmScript('dev', ...bind(app)),
  // The starter has no deployment plugin (Nitro, Cloudflare, Netlify): its production server is
  // SolidStart's own preview of the `vite build` output (dist/server).
  production: { build: npmScript('build'), start: ({ app }) => npmScript('preview', ...bind(app)) },
});
