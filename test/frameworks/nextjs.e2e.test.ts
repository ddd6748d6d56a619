import { describeHost } from './harness.js';

describeHost({ framework: 'nextjs', devArgs: ['--hostname', '127.0.0.1', '--port', '3000'] });
