import { afterAll, describe, expect, it } from 'vitest';
import { createRunner } from '../../runner-core/create-runner.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import { TEST_TOKEN } from '../helpers/runner.js';

const { Request: HostRequest, Response: HostResponse } = globalThis;

afterAll(() => {
  // The second case swaps them: give the rest of this worker its own back.
  Object.defineProperty(globalThis, 'Request', { value: HostRequest });
  Object.defineProperty(globalThis, 'Response', { value: HostResponse });
});

/** Starts a runner on a memory store with `ownsGlobals`, asks its API twice, and closes it. */
async function answers(ownsGlobals: boolean): Promise<unknown[]> {
  const store = await openSqliteStore(':memory:');
  const created = await createRunner({ store, tokens: [TEST_TOKEN], port: 0, api: { ownsGlobals } });
  try {
    const health = await fetch(`${created.url}/healthz`);
    const missing = await fetch(`${created.url}/v1/runs/wfr_missing`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    return [health.status, missing.status, missing.headers.get('content-type'), await missing.json()];
  } finally {
    await created.close(0);
    await store.close();
  }
}

const EXPECTED = [
  200,
  404,
  'application/json; charset=utf-8',
  { error: { code: 'NOT_FOUND', message: expect.any(String) } },
];

describe("the API server and the process's Request and Response", () => {
  it("leaves a library host's globals alone", async () => {
    expect(await answers(false)).toEqual(EXPECTED);
    expect(globalThis.Request).toBe(HostRequest);
    expect(globalThis.Response).toBe(HostResponse);
  });

  it("swaps them for the adapter's lightweight ones in a process that is the runner's, answering the same", async () => {
    expect(await answers(true)).toEqual(EXPECTED);
    expect(globalThis.Response).not.toBe(HostResponse);
    expect(new Response('x')).toBeInstanceOf(HostResponse);
  });
});
