import { describeUpstashHost } from './host-suite.js';
import { nextjsApp } from './hosts.js';

describeUpstashHost('Upstash Workflow on Next.js', nextjsApp, 'wf start');
