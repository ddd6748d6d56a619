import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'hono',
  // What `wf dev` gives the app: its port, and ENVIRONMENT=development.
  dev: ({ app }) => ({ ...npmScript('dev'), env: { PORT: String(app), ENVIRONMENT: 'development' } }),
  // Runs its TypeScript source on Node (no build step); HOST and PORT come from the suite.
  production: { start: () => npmScript('start') },
});
