import type { IncomingMessage, ServerResponse } from 'node:http';
import { NonRetryableError } from '../../protocol/errors.js';
import type { Workflow } from '../../serve/core/handler.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';
import { gate, startApp, type TestApp, type TestRunner } from '../helpers/runner.js';

/** Markup a step returns; the dashboard must show it as text and run none of it. */
export const XSS_TEXT = '<script>window.__xss=1</script><img src=x onerror=window.__xss=2>';
export const JS_URL = 'javascript:alert(1)';

/** The workflows the dashboard tests start, each on its own route of a real app. */
export interface Apps {
  twoStep: TestApp;
  failing: TestApp;
  xss: TestApp;
  sleep: TestApp;
  call: TestApp;
  wait: TestApp;
  parallel: TestApp;
  /** Holds its one step until `release()`: a run that is visibly running. */
  held: TestApp;
  release(): void;
  /** The target the `call` workflow requests. */
  target: Endpoint;
  close(): Promise<void>;
}

const twoStep: Workflow<{ text: string }> = async (context) => {
  const upper = await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
  return context.run('second-step', () => ({ upper, length: upper.length, at: new Date('2025-01-02T03:04:05Z') }));
};

const failing: Workflow = async (context) => {
  await context.run('reserve-stock', () => 'reserved');
  await context.run('charge-card', () => {
    // Step logs: what the step printed before it failed stays with its attempt.
    console.log('charging order 42');
    context.log('error', 'card declined', { code: 'insufficient_funds', amount: 4200 });
    throw new NonRetryableError('card declined: insufficient funds');
  });
};

const xss: Workflow = async (context) => {
  await context.run('markup', () => XSS_TEXT);
  await context.run('link', () => ({ href: JS_URL }));
};

const sleep: Workflow = async (context) => {
  await context.run('warm-up', () => 'ok');
  await context.sleep('nap', '1h');
};

const wait: Workflow = async (context) => {
  const { eventData } = await context.waitForEvent('await-payment', 'order-42-paid', { timeout: '1h' });
  return context.run('ship', () => ({ shipped: true, eventData }));
};

const parallel: Workflow = async (context) => {
  const [a, b] = await Promise.all([context.run('fetch-a', () => 'A'), context.run('fetch-b', () => 'B')]);
  return context.run('merge', () => a + b);
};

/** A target that answers 201 with a JSON body and a header of its own. */
function inventory(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-inventory': 'warehouse-7' });
    res.end(JSON.stringify({ received: body === '' ? null : JSON.parse(body), items: ['widget', 'gadget'] }));
  });
}

export async function startApps(runner: TestRunner): Promise<Apps> {
  const options = { token: runner.token, runnerUrl: runner.url };
  const target = await startServer(inventory);
  const held = gate();
  const call: Workflow = async (context) => {
    const answer = await context.call<{ items: string[] }>('fetch-inventory', {
      url: `${target.url}/inventory`,
      method: 'POST',
      headers: { 'x-request-id': 'req-77' },
      body: { sku: 'A-1' },
    });
    return context.run('count', () => answer.body.items.length);
  };
  const apps = {
    twoStep: await startApp(twoStep, options),
    failing: await startApp(failing, options),
    xss: await startApp(xss, options),
    sleep: await startApp(sleep, options),
    call: await startApp(call, options),
    wait: await startApp(wait, options),
    parallel: await startApp(parallel, options),
    held: await startApp(
      async (context) => context.run('slow-step', async () => (await held.promise, 'released')),
      options,
    ),
  };
  return {
    ...apps,
    release: held.open,
    target,
    async close() {
      await Promise.all(Object.values(apps).map((app) => app.close()));
      await target.close();
    },
  };
}
