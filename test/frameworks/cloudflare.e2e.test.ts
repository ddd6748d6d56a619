import { describeHost, npmScript } from './host-suite.js';

const wrangler = (app: number, inspector: number): string[] => [
  '--ip',
  '127.0.0.1',
  '--port',
  String(app),
  '--inspector-port',
  String(inspector),
];

describeHost({
  framework: 'cloudflare',
  dev: ({ app, spare }) => npmScript('dev', ...wrangler(app, spare)),
  // A deploy stand-in: wrangler.jsonc's own ENVIRONMENT=production (.dev.vars now holds only WF_TOKEN and WF_RUNNER_URL).
  production: {
    start: ({ app, spare }) => npmScript('dev', ...wrangler(app, spare), '--var', 'ENVIRONMENT:production'),
  },
});
