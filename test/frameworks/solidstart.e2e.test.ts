import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'solidjs',
  dev: ({ app }) => npmScript('dev', '--host', '127.0.0.1', '--port', String(app), '--strictPort'),
});
