import { describeHost } from './harness.js';

describeHost({ framework: 'hono-workers', devArgs: ['--ip', '127.0.0.1', '--port', '8787'] });
