import * as env from "$app/env/private";
import { serve } from "wfkit/svelte";
import type { RequestHandler } from "./$types";

// WF_TOKEN, WF_RUNNER_URL and ENVIRONMENT come from .env.local (written by `wf init`) or the environment, declared in src/env.ts.
export const POST: RequestHandler = serve<{ text: string }>(
  async (context) => {
    const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
    await context.run("second-step", async () => {
      console.log(upper);
      return upper.length;
    });
  },
  // The service's guide: `baseUrl` only when the mode flag says development (`wf dev` sets ENVIRONMENT=development),
  // as the public URL `wf dev --tunnel` sets as WF_WORKFLOW_URL (unset: the dev server's own address). Deployed,
  // nothing here names a URL: serve() takes the platform's deployment URL (VERCEL_URL, RENDER_EXTERNAL_URL, …) or
  // else the request's own URL, and the runner calls it only if its operator allowed that origin (--allow-origin).
  { env, baseUrl: env.ENVIRONMENT === "development" ? env.WF_WORKFLOW_URL : undefined },
);
