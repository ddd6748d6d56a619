import { dev } from "$app/env";
import * as env from "$app/env/private";
import { serve } from "wfkit/svelte";
import type { RequestHandler } from "./$types";

// WF_TOKEN and WF_RUNNER_URL come from .env.local (written by `wf init`), declared in src/env.ts.
export const POST: RequestHandler = serve<{ text: string }>(
  async (context) => {
    const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
    await context.run("second-step", async () => {
      console.log(upper);
      return upper.length;
    });
  },
  // In development the runner calls the app back on the dev server, or on the public URL `wf dev --tunnel`
  // sets as WF_WORKFLOW_URL; deployed, the request's own URL is used.
  { env, baseUrl: dev ? env.WF_WORKFLOW_URL || "http://localhost:5173" : undefined },
);
