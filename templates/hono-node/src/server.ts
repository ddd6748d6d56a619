import { serve } from "@hono/node-server";
import app from "./app.ts";

const port = Number(process.env.PORT ?? 3000);

// 127.0.0.1: the local runner calls the app here; `wf dev --tunnel` exposes it when a remote runner needs to.
serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, (info) => {
  console.log(`app listening on http://127.0.0.1:${info.port} (POST /workflow starts a run)`);
});
