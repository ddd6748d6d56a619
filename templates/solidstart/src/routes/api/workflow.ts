import { serve } from "wfkit/solidjs";

// WF_TOKEN and WF_RUNNER_URL come from .env (written by `wf init`; vite.config.ts loads it in dev).
export const POST = serve<{ text: string }>(
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
  { baseUrl: process.env.ENVIRONMENT === "development" ? process.env.WF_WORKFLOW_URL : undefined },
);
