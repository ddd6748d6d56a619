import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'nextjs',
  dev: ({ app }) => npmScript('dev', '--hostname', '127.0.0.1', '--port', String(app)),
  production: {
    build: npmScript('build'),
    start: ({ app }) => npmScript('start', '--hostname', '127.0.0.1', '--port', String(app)),
  },
});
