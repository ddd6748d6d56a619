import { FINISHED_RUN_STATUSES, type RunStatus } from '../../api/dto.js';

/** The runner's own view of an Upstash run, read through its native API (`GET /v1/runs/:id`), as both dashboards do. */

export interface RunView {
  run: { id: string; status: RunStatus; url: string; output?: unknown; error?: unknown };
  steps: { name: string; kind?: string; status: string; output?: unknown; outputEncoded: string | null }[];
  attempts: unknown[];
}

export async function getRunView(
  runnerUrl: string,
  token: string,
  id: string,
): Promise<{ status: number; view?: RunView; text: string }> {
  const response = await fetch(`${runnerUrl}/v1/runs/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await response.text();
  return { status: response.status, text, ...(response.ok && { view: JSON.parse(text) as RunView }) };
}

/** Polls until the run is finished (completed, failed or cancelled); fails with the last answer after `timeoutMs`. */
export async function waitForRunView(
  runnerUrl: string,
  token: string,
  id: string,
  timeoutMs = 20_000,
  appOutput?: () => string,
): Promise<RunView> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const { view, status, text } = await getRunView(runnerUrl, token, id);
    last = `${status} ${text.slice(0, 2_000)}`;
    if (view && FINISHED_RUN_STATUSES.has(view.run.status)) return view;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `Run ${id} did not finish within ${timeoutMs} ms; GET /v1/runs/${id} last answered: ${last}${appOutput ? `\n--- app output ---\n${appOutput().slice(-4_000)}` : ''}`,
  );
}

/** Polls `probe` until it returns a value other than undefined (bounded). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
}

/** Steps as [name, plain output] pairs, the form the assertions compare. */
export function stepOutputs(view: RunView): [string, unknown][] {
  return view.steps.map((step) => [step.name, step.output]);
}
