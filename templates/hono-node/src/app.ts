import { Hono } from "hono";
import { serve } from "wfkit/hono";

const app = new Hono();

app.get("/", (c) => c.text('POST JSON like {"text":"hello"} to /workflow to start a run.\n'));

app.post(
  "/workflow",
  serve<{ text: string }>(async (context) => {
    const upper = await context.run("initial-step", () => context.requestPayload.text.toUpperCase());
    await context.run("second-step", async () => {
      console.log(upper);
      return upper.length;
    });
  }),
);

export default app;
