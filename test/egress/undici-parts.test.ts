import { createServer } from 'node:http';
import * as undici from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, buildConnector, errors, request } from '../../runner-core/egress/undici-parts.js';

/**
 * The gate loads undici's parts by their own paths (undici-parts.ts); these fail if undici moves a
 * path or stops exporting from it what the gate uses.
 */
describe("undici's parts the gate loads", () => {
  it("are the very ones undici's index exports", () => {
    expect(Agent).toBe(undici.Agent);
    expect(buildConnector).toBe(undici.buildConnector);
    expect(errors).toBe(undici.errors);
    expect(errors.HeadersTimeoutError).toBeTypeOf('function');
    expect(errors.BodyTimeoutError).toBeTypeOf('function');
  });

  describe('request', () => {
    const server = createServer((req, res) => res.end(`${req.method} ${req.url}`));
    let origin = '';
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const address = server.address();
      origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("is what undici's index puts on every dispatcher", async () => {
      const agent = new Agent({ keepAliveTimeout: 10 });
      try {
        const answer = await request(agent, { origin, path: '/x?y=1', method: 'POST', body: 'b' });
        expect(answer.statusCode).toBe(200);
        expect(await answer.body.text()).toBe('POST /x?y=1');
      } finally {
        await agent.close();
      }
    });
  });
});
