import { describeUpstashHost } from './host-suite.js';
import { cloudflareApp } from './hosts.js';

describeUpstashHost('Upstash Workflow on a Cloudflare Worker (wrangler dev)', cloudflareApp, 'wf dev');
