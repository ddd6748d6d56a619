import { describeHost } from './harness.js';

describeHost({ framework: 'nuxt', devArgs: ['--host', '127.0.0.1', '--port', '3000'] });
