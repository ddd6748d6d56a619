import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'hono',
  // What `wf dev` gives the app: its port, and ENVIRONMENT=development.
  dev: ({ app }) => ({ ...npmScript('dev'), env: { PORT: String(app), ENVIRONMENT: 'development' } }),
});
