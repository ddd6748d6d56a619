import { describe, expect, it } from 'vitest';
import { shownWebhook } from '../../runner-core/alerts/deliver.js';
import { alertDocument } from '../../runner-core/alerts/document.js';
import { alertConfig } from '../../runner-core/alerts/options.js';
import { settleAlert } from '../../runner-core/alerts/settle.js';
import { owedAlert } from '../../runner-core/run-end/owed.js';
import { alertSignature, verifyAlertSignature } from '../../runner-core/alerts/signature.js';
import type { Run, Step } from '../../runner-core/store/types.js';

const NOW = 1_700_000_000_000;
const HALF = (): number => 0.5;
const policy = { baseMs: 1000, capMs: 30_000, horizonMs: 60_000 };
const ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';

function failedRun(overrides: Partial<Run> = {}): Run {
  return {
    id: ID,
    url: 'http://127.0.0.1:3000/workflow',
    status: 'failed',
    body: '{}',
    headers: {},
    createdAt: NOW - 5000,
    updatedAt: NOW - 10,
    finishedAt: NOW - 10,
    nextAt: NOW - 10,
    failures: 0,
    retries: 2,
    retryDelayMs: 100,
    stepsDone: 1,
    attempts: 6,
    output: null,
    error: { name: 'Error', message: 'card declined', stack: 'at charge (app.ts:1)' },
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    alert: 'pending',
    alertAttempts: 0,
    ...overrides,
  };
}

function step(index: number, name: string, status: Step['status']): Step {
  return {
    runId: ID,
    index,
    name,
    kind: 'run',
    status,
    output: null,
    error: null,
    startedAt: NOW - 100,
    finishedAt: NOW - 50,
    durationMs: 50,
    reportedExecutions: 1,
    failures: status === 'failed' ? 3 : 0,
    group: null,
    until: null,
    eventId: null,
    request: null,
  };
}

describe('settleAlert', () => {
  it('delivered: done, whatever the failureFunction call does (it is a delivery of its own)', () => {
    expect(settleAlert(failedRun(), { delivered: true }, NOW, HALF, policy)).toEqual({
      attempts: 7,
      alertAttempts: 1,
      alert: 'delivered',
      alertNextAt: null,
    });
    expect(settleAlert(failedRun({ failureCall: 'pending' }), { delivered: true }, NOW, HALF, policy)).toEqual({
      attempts: 7,
      alertAttempts: 1,
      alert: 'delivered',
      alertNextAt: null,
    });
  });

  it('not delivered: pending on the unreachable schedule counted from the failure, a Retry-After within the cap', () => {
    const first = settleAlert(failedRun(), { delivered: false }, NOW, HALF, policy);
    expect(first).toEqual({ attempts: 7, alertAttempts: 1, alertNextAt: NOW + 750 });
    // 8 s after the failure: about 8 s more (half plus jitter of half).
    expect(
      settleAlert(failedRun({ finishedAt: NOW - 8000, alertAttempts: 4 }), { delivered: false }, NOW, HALF, policy),
    ).toEqual({ attempts: 7, alertAttempts: 5, alertNextAt: NOW + 6000 });
    expect(settleAlert(failedRun(), { delivered: false, retryAfterMs: 5000 }, NOW, HALF, policy)).toMatchObject({
      alertNextAt: NOW + 5000,
    });
    expect(settleAlert(failedRun(), { delivered: false, retryAfterMs: 3_600_000 }, NOW, HALF, policy)).toMatchObject({
      alertNextAt: NOW + 30_000,
    });
    // Its own fields only: the run's failures, outage and claim time belong to its failureFunction call and to run-end.
    expect(first).not.toHaveProperty('failures');
    expect(first).not.toHaveProperty('unreachableSince');
    expect(first).not.toHaveProperty('nextAt');
  });

  it('past the horizon since the failure: given up', () => {
    expect(
      settleAlert(
        failedRun({ finishedAt: NOW - 60_000, failureCall: 'pending' }),
        { delivered: false },
        NOW,
        HALF,
        policy,
      ),
    ).toEqual({
      attempts: 7,
      alertAttempts: 1,
      alert: 'failed',
      alertNextAt: null,
    });
  });

  it('a failed run owes one, due now, counted from zero', () => {
    expect(owedAlert(NOW)).toEqual({ alert: 'pending', alertAttempts: 0, alertNextAt: NOW });
  });
});

describe('alertDocument', () => {
  it('names the step that failed for good, links the dashboard, and keeps the stack out', () => {
    const run = failedRun({ alertAttempts: 2, attempts: 8 });
    const doc = alertDocument(
      run,
      [step(0, 'reserve', 'succeeded'), step(1, 'charge', 'failed')],
      'https://wf.example.com',
    );
    expect(doc).toEqual({
      type: 'run.failed',
      id: `${ID}.${NOW - 10}`,
      runId: ID,
      url: run.url,
      status: 'failed',
      error: { name: 'Error', message: 'card declined' },
      failedStep: { index: 1, name: 'charge', kind: 'run' },
      createdAt: new Date(NOW - 5000).toISOString(),
      failedAt: new Date(NOW - 10).toISOString(),
      attempts: 6,
      dashboardUrl: `https://wf.example.com/runs/${ID}`,
      text: `wfkit run ${ID} failed at step "charge" (#1): Error: card declined\nhttps://wf.example.com/runs/${ID}`,
    });
  });

  it('a run that failed outside any step, without a dashboard address; a huge message is clipped', () => {
    const doc = alertDocument(
      failedRun({ error: { name: 'AppUnreachableError', code: 'APP_UNREACHABLE', message: 'x'.repeat(10_000) } }),
      [],
      undefined,
    );
    expect(doc.failedStep).toBeNull();
    expect(doc.dashboardUrl).toBeNull();
    expect(doc.error.code).toBe('APP_UNREACHABLE');
    expect(doc.error.message.length).toBeLessThan(2_100);
    expect(doc.text.length).toBeLessThan(700);
    expect(doc.text).toMatch(
      /^wfkit run \S+ failed: AppUnreachableError: x+… \[9500 more characters\]\nhttp:\/\/127\.0\.0\.1:3000\/workflow$/,
    );
  });
});

describe('alert signature', () => {
  const body = '{"type":"run.failed"}';
  const t = Math.floor(NOW / 1000);

  it('verifies its own signature within the tolerance, and nothing else', () => {
    const header = alertSignature(body, 'secret-0123456789abcdef', t);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyAlertSignature(body, header, 'secret-0123456789abcdef', t + 10)).toBe(true);
    expect(verifyAlertSignature(body + ' ', header, 'secret-0123456789abcdef', t)).toBe(false);
    expect(verifyAlertSignature(body, header, 'other-secret-0123456789', t)).toBe(false);
    expect(verifyAlertSignature(body, header, 'secret-0123456789abcdef', t + 301)).toBe(false);
    for (const bad of [undefined, '', 't=abc,v1=00', `t=${t}`, `v1=${'0'.repeat(64)}`, `t=${t},v1=${'z'.repeat(64)}`]) {
      expect(verifyAlertSignature(body, bad, 'secret-0123456789abcdef', t)).toBe(false);
    }
  });
});

describe('alert options', () => {
  it('checks the webhook and public URLs and the secret when the runner is made', () => {
    expect(() => alertConfig({ webhookUrl: 'hooks.slack.com/x' }, 'tok')).toThrow(
      'Expected the alert webhook (--alert-webhook, WF_ALERT_WEBHOOK) to be an http(s) URL, got "hooks.slack.com/x".',
    );
    expect(() => alertConfig({ webhookUrl: 'ftp://example.com/x' }, 'tok')).toThrow('got the scheme "ftp:"');
    expect(() => alertConfig({ webhookUrl: 'https://example.com/x', secret: 'short' }, 'tok')).toThrow(
      'at least 16 characters, got 5',
    );
    expect(() => alertConfig({ webhookUrl: 'https://example.com/x', publicUrl: 'nope' }, 'tok')).toThrow(
      '--public-url',
    );
    expect(
      alertConfig({ webhookUrl: 'https://example.com/x', publicUrl: 'https://wf.example.com/' }, 'tok'),
    ).toMatchObject({ secret: 'tok', publicUrl: 'https://wf.example.com' });
  });

  it('the log shows the webhook without its path (a Slack webhook path is its secret)', () => {
    expect(shownWebhook(new URL('https://hooks.slack.com/services/T0/B0/xyz'))).toBe('https://hooks.slack.com/…');
    expect(shownWebhook(new URL('http://127.0.0.1:9/'))).toBe('http://127.0.0.1:9');
  });
});
