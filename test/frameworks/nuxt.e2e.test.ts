import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'nuxt',
  dev: ({ app }) => npmScript('dev', '--host', '127.0.0.1', '--port', String(app)),
  // Nitro's node server reads HOST and PORT.
  production: {
    build: npmScript('build'),
    start: () => ({ command: process.execPath, args: ['.output/server/index.mjs'] }),
  },
});
