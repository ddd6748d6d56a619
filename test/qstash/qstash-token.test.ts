import { describe, expect, it } from 'vitest';
import { qstashToken, qstashUserId, unwrapQstashToken } from '../../runner-core/qstash/qstash-token.js';
import { namesAddress, parseHookPath } from '../../runner-core/qstash/waits/webhooks.js';
import { TokenSet } from '../../runner-core/tokens.js';

describe('QSTASH_TOKEN shape', () => {
  it('wraps a runner token as QStash issues them: base64 JSON with a UserID, which the SDK reads', () => {
    const wrapped = qstashToken('wf_secret');
    // What @upstash/workflow does before a createWebhook step: base64-decode, JSON.parse, read UserID.
    const decoded = JSON.parse(atob(wrapped)) as { UserID: string; Password: string };
    expect(decoded).toEqual({ UserID: qstashUserId('wf_secret'), Password: 'wf_secret' });
    expect(decoded.UserID).not.toContain('secret');
    expect(qstashUserId('wf_secret')).toBe(qstashUserId('wf_secret'));
    expect(qstashUserId('wf_other')).not.toBe(qstashUserId('wf_secret'));
  });

  it('a token set takes one of its tokens as it is or wrapped (any UserID), and nothing else', () => {
    const tokens = new TokenSet(['wf_one', 'wf_two']);
    const wrap = (value: object): string => `Bearer ${Buffer.from(JSON.stringify(value)).toString('base64')}`;
    expect(tokens.check('Bearer wf_one')).toBe(true);
    expect(tokens.check(`Bearer ${qstashToken('wf_two')}`)).toBe(true);
    expect(tokens.check(wrap({ UserID: 'made-up', Password: 'wf_one' }))).toBe(true);
    for (const refused of [
      `Bearer ${qstashToken('wf_three')}`,
      wrap({ UserID: 'wf_one' }),
      wrap({ UserID: 'x', Password: 42 }),
      wrap(['wf_one']),
      'Bearer bm90IGpzb24=',
      `Bearer ${'A'.repeat(10_000)}`,
      'Bearer !!!',
      'wf_one',
      undefined,
    ]) {
      expect(tokens.check(refused), String(refused).slice(0, 60)).toBe(false);
    }
    expect(unwrapQstashToken(qstashToken('wf_one'))).toBe('wf_one');
  });
});

describe('webhook URLs', () => {
  it('parses /workflows/hooks/<user>/<run>/<event> and nothing longer, shorter or empty', () => {
    expect(parseHookPath('/workflows/hooks/u/wfr_1/evt_1')).toEqual({ userId: 'u', runId: 'wfr_1', eventId: 'evt_1' });
    for (const path of [
      '/workflows/hooks/u/wfr_1',
      '/workflows/hooks/u/wfr_1/evt_1/x',
      '/workflows/hooks/u//evt_1',
      '/workflows/hooks/',
      '/workflows/hook/u/r/e',
      `/workflows/hooks/u/r/${'e'.repeat(201)}`,
    ]) {
      expect(parseHookPath(path), path).toBeUndefined();
    }
  });

  it('a request names the webhook the SDK made only with all three parts, behind a path prefix too', () => {
    const made = 'https://runner.example/qstash/v2/workflows/hooks/u1/wfr_a/evt_abc';
    expect(namesAddress(made, { userId: 'u1', runId: 'wfr_a', eventId: 'evt_abc' })).toBe(true);
    expect(namesAddress(made, { userId: 'u2', runId: 'wfr_a', eventId: 'evt_abc' })).toBe(false);
    expect(namesAddress(made, { userId: 'u1', runId: 'wfr_b', eventId: 'evt_abc' })).toBe(false);
    expect(namesAddress('not a url', { userId: 'u1', runId: 'wfr_a', eventId: 'evt_abc' })).toBe(false);
  });
});
