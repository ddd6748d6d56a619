import { serve, type WorkflowBindings } from "wfkit/cloudflare";

// WF_TOKEN and ENVIRONMENT come from .dev.vars in `wrangler dev`, from secrets and vars when deployed.
interface Env extends WorkflowBindings {
  ENVIRONMENT: string;
}

export default {
  async fetch(request, env) {
    // Built inside `fetch` because `baseUrl` depends on the bindings, which Workers hand over per request.
    const handler = serve<{ text: string }, Env>(
      async (context) => {
        const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
        await context.run("second-step", async () => {
          console.log(upper);
          return upper.length;
        });
      },
      // In development the runner calls the Worker back on wrangler's address, or on the public URL `wf dev --tunnel`
      // sets as WF_WORKFLOW_URL; deployed, the request's own URL is used.
      { baseUrl: env.ENVIRONMENT === "development" ? env.WF_WORKFLOW_URL || "http://localhost:8787" : undefined },
    );
    return handler(request, env);
  },
} satisfies ExportedHandler<Env>;
