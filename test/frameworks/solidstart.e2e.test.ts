import { describeHost } from './harness.js';

describeHost({ framework: 'solidjs', devArgs: ['--host', '127.0.0.1', '--port', '5173', '--strictPort'] });
