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
  // In development the runner calls the app back on the dev server, or on the public URL `wf dev --tunnel`
  // sets as WF_WORKFLOW_URL; deployed, the request's own URL is used.
  { baseUrl: import.meta.env.DEV ? process.env.WF_WORKFLOW_URL || "http://localhost:5173" : undefined },
);
