import { Hono } from "hono";
import { serve, type WorkflowBindings } from "wfkit/hono";

// WF_TOKEN and ENVIRONMENT come from .dev.vars in `wrangler dev`, from secrets and vars when deployed.
type Bindings = WorkflowBindings & { ENVIRONMENT: string };

const app = new Hono<{ Bindings: Bindings }>();

app.get("/", (c) => c.text('POST JSON like {"text":"hello"} to /workflow to start a run.\n'));

app.post("/workflow", (c) => {
  // Built per request because `baseUrl` depends on the bindings, which Workers hand over per request.
  const handler = serve<{ text: string }, Bindings>(
    async (context) => {
      const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
      await context.run("second-step", async () => {
        console.log(upper);
        return upper.length;
      });
    },
    // In development the runner calls the app back on wrangler's address, or on the public URL `wf dev --tunnel`
    // sets as WF_WORKFLOW_URL; deployed, the request's own URL is used.
    { baseUrl: c.env.ENVIRONMENT === "development" ? c.env.WF_WORKFLOW_URL || "http://localhost:8787" : undefined },
  );
  return handler(c);
});

export default app;
