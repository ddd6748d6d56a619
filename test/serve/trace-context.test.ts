import { describe, expect, it } from 'vitest';
import { signRequest } from '../../protocol/signing.js';
import { stepTraceContext, type TraceContext } from '../../protocol/trace-context.js';
import { createHandler } from '../../serve/core/handler.js';
import { driveRequest, readOutcomes } from '../helpers/drive.js';

/** `serve` hands a drive's `traceparent` to the workflow as `context.trace` (and to failureFunction). */
const URL_ = 'https://app.example.com/api/workflow';
const TOKEN = 'trace-test-token';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

let stepSeen: { index: number; name: string; trace: TraceContext | undefined } | undefined;

async function traceSeen(traceparent: string | undefined): Promise<TraceContext | undefined | 'not called'> {
  let seen: TraceContext | undefined | 'not called' = 'not called';
  stepSeen = undefined;
  const handle = createHandler(
    async (context) => {
      seen = context.trace;
      await context.run('a', (step) => {
        stepSeen = step;
        return 1;
      });
    },
    { token: TOKEN, runnerUrl: 'http://127.0.0.1:9', url: URL_ },
  );
  const request = await driveRequest(URL_, TOKEN, { runId: 'wfr_TRACE', body: '', steps: [] });
  if (traceparent !== undefined) request.headers.set('traceparent', traceparent);
  const response = await handle(request);
  expect(response.status).toBe(200);
  expect((await readOutcomes(response)).at(-1)).toEqual({ t: 'done' });
  return seen;
}

describe('context.trace', () => {
  it("is the drive request's traceparent, parsed", async () => {
    const drive = await traceSeen(TRACEPARENT);
    expect(drive).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
      traceparent: TRACEPARENT,
    });
    // The step's fn gets the span the runner gives that step.
    expect(stepSeen).toEqual({ index: 0, name: 'a', trace: stepTraceContext(drive as TraceContext, 0) });
  });

  it('is undefined without the header, and for a malformed one the drive still runs', async () => {
    expect(await traceSeen(undefined)).toBeUndefined();
    expect(stepSeen).toEqual({ index: 0, name: 'a', trace: undefined });
    expect(await traceSeen('00-not-a-trace-01')).toBeUndefined();
  });

  it('reaches failureFunction too', async () => {
    let seen: TraceContext | undefined;
    const handle = createHandler(async () => {}, {
      token: TOKEN,
      runnerUrl: 'http://127.0.0.1:9',
      url: URL_,
      failureFunction: ({ context }) => void (seen = context.trace),
    });
    const body = JSON.stringify({
      v: 1,
      runId: 'wfr_TRACE',
      body: '',
      headers: {},
      steps: [],
      attempt: 1,
      failure: { error: { name: 'Error', message: 'x' } },
    });
    const request = new Request(URL_, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: TRACEPARENT,
        ...(await signRequest({ url: URL_, body, tokens: [TOKEN] })),
      },
      body,
    });
    const response = await handle(request);
    expect((await readOutcomes(response)).at(-1)).toEqual({ t: 'done' });
    expect(seen?.spanId).toBe('00f067aa0ba902b7');
  });
});
