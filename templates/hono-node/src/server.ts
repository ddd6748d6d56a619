import { serve } from "@hono/node-server";
import app from "./app.ts";

const port = Number(process.env.PORT ?? 3000);

// 127.0.0.1: the local runner calls the app here (no `baseUrl` needed: the request's own URL is this
// address); `wf dev --tunnel` exposes it and sets WF_WORKFLOW_URL, which `serve` reads by itself.
serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, (info) => {
  console.log(`app listening on http://127.0.0.1:${info.port} (POST /workflow starts a run)`);
});
