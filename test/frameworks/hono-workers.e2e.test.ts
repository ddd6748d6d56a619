import { describeHost, npmScript } from './host-suite.js';

const wrangler = (app: number, inspector: number): string[] => ['--ip', '127.0.0.1', '--port', String(app), '--inspector-port', String(inspector)];

describeHost({
  framework: 'hono-workers',
  dev: ({ app, spare }) => npmScript('dev', ...wrangler(app, spare)),
});
