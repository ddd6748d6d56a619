import { afterEach, describe, expect, it } from 'vitest';
import { closeStarted, startTestRunner } from '../helpers/runner.js';

/**
 * No input to the QStash API yields a 5xx: malformed batches, headers, paths and bodies are 4xx
 * answers that say what was expected. Seeded, so a failure replays.
 */

afterEach(closeStarted);

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PATHS = [
  '/v2/publish/',
  '/v2/publish/http://127.0.0.1:1/x',
  '/v2/publish/https://example.com/y',
  '/v2/publish/%ZZ',
  '/v2/publish/queue/q',
  '/v2/batch',
  '/v2/workflows/runs/wfr_nope',
  '/v2/workflows/runs/%E0%A4%A',
  '/v2/workflows/runs/',
  '/v2/unknown',
  '/v2',
];
const BODIES = [
  '',
  '{',
  '[]',
  '[1]',
  '[{}]',
  '[{"destination":5}]',
  '[{"destination":"http://127.0.0.1:1/a","headers":{"a":1}}]',
  '[{"destination":"http://127.0.0.1:1/a","body":{}}]',
  '[{"destination":"http://127.0.0.1:1/a","queue":"q"}]',
  'null',
  '"x"',
  '{"a":1}',
  '[{"destination":"http://127.0.0.1:1/a","headers":{"Upstash-Workflow-RunId":"wfr_x","Upstash-Workflow-Init":"false"}}]',
  '[{"destination":"http://127.0.0.1:1/a","headers":{"Upstash-Delay":"forever"}}]',
];
const HEADERS: Record<string, string>[] = [
  {},
  { 'upstash-delay': '-1s' },
  { 'upstash-retries': '1e9' },
  { 'upstash-retry-delay': 'pow(' },
  { 'upstash-workflow-runid': 'wfr_ok', 'upstash-workflow-init': 'true' },
  { 'upstash-callback': 'nope' },
  { 'upstash-not-before': 'tomorrow' },
  { 'upstash-method': 'BREW' },
  { 'upstash-flow-control-key': 'k', 'upstash-flow-control-value': 'rate=x' },
  { 'upstash-forward-x': 'y', 'upstash-workflow-runid': 'wfr_unknown_run' },
];

describe('QStash API inputs', () => {
  it('answers every malformed request with a 4xx, never a 5xx', async () => {
    const runner = await startTestRunner();
    const next = random(Number(process.env.WF_FUZZ_SEED ?? 14));
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    for (let i = 0; i < 300; i++) {
      const method = pick(['GET', 'POST', 'DELETE', 'PUT']);
      const path = pick(PATHS);
      const init: RequestInit = { method, headers: { authorization: `Bearer ${runner.token}`, ...pick(HEADERS) } };
      if (method !== 'GET') init.body = pick(BODIES);
      const response = await runner.app.request(new Request(`http://127.0.0.1${path}`, init));
      const text = await response.text();
      expect(response.status, `${method} ${path} ${JSON.stringify(init)} -> ${text}`).toBeLessThan(500);
      if (response.status >= 400) expect(JSON.parse(text)).toHaveProperty('error.message');
    }
  });
});
