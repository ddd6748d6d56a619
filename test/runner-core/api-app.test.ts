import type { Logger } from '../../runner-core/telemetry/logger.js';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkflowError } from '../../protocol/errors.js';
import { MAX_JSON_DEPTH } from '../../protocol/validate.js';
import { ApiError, OriginNotAllowedError, RunFinishedError, RunNotFoundError } from '../../runner-core/errors.js';
import { toApiError } from '../../runner-core/api/error-response.js';
import { newRunId } from '../../runner-core/ids.js';
import { requestApp } from '../helpers/api-app.js';
import { TEST_TOKEN, startTestRunner, type TestRunner } from '../helpers/runner.js';

/** The API as a Hono app (runner-core/api/app.ts), called without a socket. */

let runner: TestRunner | undefined;

afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

const auth = { authorization: `Bearer ${TEST_TOKEN}` };

/** A Logger that keeps its lines, so a test can read what the operator would see. */
function silentLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string): void => void lines.push(message);
  return { lines, info: keep, warn: keep, error: keep };
}

describe('runner API errors: the one place domain errors become statuses', () => {
  it.each([
    [new RunNotFoundError('wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B'), 404, 'NOT_FOUND'],
    [new RunFinishedError('wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B', 'completed'), 409, 'FINISHED'],
    [new OriginNotAllowedError('https://evil.example/wf', []), 403, 'ORIGIN_NOT_ALLOWED'],
    [new WorkflowError('PROTOCOL', 'Expected `url` to be a string, got 1.'), 400, 'BAD_REQUEST'],
    [new WorkflowError('SERIALIZATION', 'Malformed JSON in the request body.'), 400, 'BAD_REQUEST'],
    [new ApiError(413, 'TOO_LARGE', 'Request body is over the limit.'), 413, 'TOO_LARGE'],
  ])('maps %o to %i %s with its message', (error, status, code) => {
    const apiError = toApiError(error, silentLogger());
    expect({ status: apiError.status, code: apiError.code, message: apiError.message }).toEqual({
      status,
      code,
      message: (error as Error).message,
    });
  });

  it('answers 500 INTERNAL for anything else, without its message', () => {
    const logger = silentLogger();
    const error = new Error('SQLITE_IOERR: disk I/O error at /secret/path');
    const apiError = toApiError(error, logger);
    expect(logger.lines.join('\n')).toContain('SQLITE_IOERR: disk I/O error at /secret/path'); // the operator's log has it
    expect(apiError).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(apiError.message).not.toContain('SQLITE');
  });
});

describe('runner API app: requests without a socket', () => {
  it('answers HEAD of an API route with 405 and Allow, as before the router', async () => {
    runner = await startTestRunner();
    const response = await requestApp(runner.app, '/v1/runs', { method: 'HEAD' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, GET');
  });

  it('answers a streamed body over the cap with 413, and a start nested too deep with 400', async () => {
    runner = await startTestRunner({ api: { maxBodyBytes: 1024 } });
    const bytes = new TextEncoder().encode(JSON.stringify({ url: 'http://127.0.0.1:1/w', body: 'x'.repeat(4096) }));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
        controller.close();
      },
    });
    const tooLarge = await requestApp(runner.app, '/v1/runs', {
      method: 'POST',
      headers: auth,
      body,
      duplex: 'half',
    } as RequestInit);
    expect(tooLarge.status).toBe(413);
    expect((await tooLarge.json()).error).toEqual({
      code: 'TOO_LARGE',
      message: 'Request body is over the limit of 1024 bytes.',
    });

    const deep = '['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1);
    const tooDeep = await requestApp(runner.app, '/v1/runs', { method: 'POST', headers: auth, body: deep });
    expect(tooDeep.status).toBe(400);
    expect((await tooDeep.json()).error.code).toBe('BAD_REQUEST');
    expect((await runner.store.listRuns({})).runs).toEqual([]);
  });

  it('answers rerun of an unknown run with 404 naming it', async () => {
    runner = await startTestRunner();
    const id = newRunId();
    const response = await requestApp(runner.app, `/v1/runs/${id}/rerun`, { method: 'POST', headers: auth });
    expect(response.status).toBe(404);
    expect((await response.json()).error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(id) });
  });
});
