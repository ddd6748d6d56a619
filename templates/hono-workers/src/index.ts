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
    // The service's guide: `baseUrl` only when the mode flag says development (ENVIRONMENT=development in .dev.vars),
    // as the public URL `wf dev --tunnel` sets as WF_WORKFLOW_URL (unset: the dev server's own address). Deployed,
    // nothing here names a URL: serve() takes the request's own URL (Cloudflare's edge routes by host,
    // so it is the platform's statement), and the runner calls it only if its operator allowed that origin (--allow-origin).
    { baseUrl: c.env.ENVIRONMENT === "development" ? c.env.WF_WORKFLOW_URL : undefined },
  );
  return handler(c);
});

export default app;
