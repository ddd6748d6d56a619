// The two ways a run starts: in-process on the runner, or through the app's public POST.
import { Agent } from 'undici';

/** In-process: `runner.startRun`, as the runner's own API does. Returns the run id. */
export async function startInProcess(runner, url, body = '{}') {
  const { run } = await runner.startRun({ url, body, headers: {} });
  return run.id;
}

/** A client of the app's public route (keep-alive, like a real caller). */
export function createClient() {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  return {
    /** POST to the app: the app calls the runner's POST /v1/runs and answers the id. */
    async start(url, body = '{}') {
      const target = new URL(url);
      const res = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`start via app: expected 200, got ${res.statusCode}: ${text}`);
      return JSON.parse(text).workflowRunId;
    },
    close: () => agent.close(),
  };
}
