import { serve } from "wfkit/h3";

// WF_TOKEN and WF_RUNNER_URL come from .env.local (written by `wf init`; `npm run dev` loads it).
export default serve<{ text: string }>(
  async (context) => {
    const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
    await context.run("second-step", async () => {
      console.log(upper);
      return upper.length;
    });
  },
  // In development the runner calls the app back on the dev server, or on the public URL `wf dev --tunnel`
  // sets as WF_WORKFLOW_URL; deployed, the request's own URL is used.
  { baseUrl: import.meta.dev ? process.env.WF_WORKFLOW_URL || "http://localhost:3000" : undefined },
);
