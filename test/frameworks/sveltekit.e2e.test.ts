import { describeHost, npmScript } from './host-suite.js';

describeHost({
  framework: 'svelte',
  dev: ({ app }) => npmScript('dev', '--host', '127.0.0.1', '--port', String(app), '--strictPort'),
  production: {
    build: npmScript('build'),
    // adapter-node's server reads HOST and PORT, and takes the request's scheme from a proxy's header,
    // else says https (SvelteKit's rule, not wfkit's): deployed as on a VM, behind nginx.
    start: () => ({ command: process.execPath, args: ['build'], env: { PROTOCOL_HEADER: 'x-forwarded-proto' } }),
    proxyHeaders: { 'x-forwarded-proto': 'http' },
  },
});
