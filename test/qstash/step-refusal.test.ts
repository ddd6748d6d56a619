import { afterEach, describe, expect, it } from 'vitest';
import { closeStarted, startTestRunner } from '../helpers/runner.js';

/**
 * The SDK reads any 400 from QStash as "the run finished" and stops without publishing
 * (`Tried to append to a cancelled workflow`), so a runner that refused a running workflow's step
 * with 400 left that run running with nothing to send. A refused step answers 422 (the SDK then
 * fails the step, and the delivery's retries end the run); a finished run's refusal stays 400.
 */

afterEach(closeStarted);

const APP = 'http://127.0.0.1:9/workflow';

describe('a refused step publish of a running workflow', () => {
  it('answers 422, never the 400 the SDK takes for a finished run; a finished run and a plain message keep 400', async () => {
    const runner = await startTestRunner();
    const send = async (path: string, headers: Record<string, string>, body: string) => {
      const response = await runner.app.request(
        new Request(`http://127.0.0.1/v2/${path}`, {
          method: path.startsWith('workflows') ? 'DELETE' : 'POST',
          headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json', ...headers },
          body,
        }),
      );
      return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
    };
    const runId = `wfr_refused_${process.pid}`;
    const step = { 'upstash-workflow-runid': runId, 'upstash-workflow-init': 'false' };
    const started = await send(
      `publish/${APP}`,
      { 'upstash-workflow-runid': runId, 'upstash-workflow-init': 'true', 'upstash-workflow-url': APP },
      '{}',
    );
    expect(started.status).toBe(201);

    const bad = { 'upstash-delay': 'forever' };
    const viaPublish = await send(`publish/${APP}`, { ...step, ...bad }, '{}');
    expect(viaPublish.status).toBe(422);
    const viaBatch = await send('batch', {}, JSON.stringify([{ destination: APP, headers: { ...step, ...bad } }]));
    expect(viaBatch.status).toBe(422);
    // The same refusal keeps its code, and stays 400 for a message of no run.
    const plain = await send(`publish/${APP}`, bad, '{}');
    expect(plain.status).toBe(400);
    expect(viaPublish.body.error?.code).toBe(plain.body.error?.code);

    // Once the run has ended, a step publish is 400: the SDK stops there, as it should.
    expect((await send(`workflows/runs/${runId}?cancel=true`, {}, '')).status).toBe(200);
    const afterEnd = await send(`publish/${APP}`, step, '{}');
    expect(afterEnd).toMatchObject({ status: 400, body: { error: { code: 'WORKFLOW_RUN_FINISHED' } } });
  });
});
