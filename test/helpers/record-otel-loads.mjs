// Preloaded into a `wf start` child (NODE_OPTIONS=--import …): reports on stderr every module of an
// @opentelemetry package the process resolves, through both import and require, so a test can tell
// whether telemetry was loaded at all. The first line proves the hook itself is in place.
import { registerHooks } from 'node:module';

process.stderr.write('[otel-hook] ready\n');
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.includes('/@opentelemetry/')) process.stderr.write(`[otel-hook] loaded ${specifier}\n`);
    return resolved;
  },
});
