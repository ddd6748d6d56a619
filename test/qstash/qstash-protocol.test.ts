import { describe, expect, it } from 'vitest';
import { Receiver } from '@upstash/qstash';
import { defaultSigningKeys } from '../../runner-core/qstash/engine.js';
import { parseDuration, parseRetryDelay, QStashHeaderError } from '../../runner-core/qstash/durations.js';
import { canonicalHeaderName } from '../../runner-core/qstash/delivery/header-case.js';
import { parseMessage } from '../../runner-core/qstash/messages/spec.js';
import { runHeadersFor } from '../../runner-core/qstash/delivery/run-headers.js';
import { signDelivery } from '../../runner-core/qstash/signature.js';

/** The wire details of the QStash API: signatures the real Receiver accepts, and how headers read. */

describe('Upstash-Signature', () => {
  const keys = defaultSigningKeys('wf_test_token_0123456789');
  const url = 'http://127.0.0.1:3000/api/workflow';
  const body = JSON.stringify([{ messageId: 'msg_1', body: 'e30=', callType: 'step' }]);

  it('verifies with the real @upstash/qstash Receiver, with the current key and after a rotation', async () => {
    const signature = signDelivery(keys.current, url, body);
    expect(
      await new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next }).verify({
        signature,
        body,
        url,
      }),
    ).toBe(true);
    // Keys rotated on the app's side first: the runner's key is now its "next" one.
    expect(
      await new Receiver({ currentSigningKey: 'sig_old', nextSigningKey: keys.current }).verify({
        signature,
        body,
        url,
      }),
    ).toBe(true);
  });

  it('is refused for another body, another URL or another key', async () => {
    const signature = signDelivery(keys.current, url, body);
    const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    await expect(receiver.verify({ signature, body: body + ' ', url })).rejects.toThrow(/body hash/);
    await expect(receiver.verify({ signature, body, url: `${url}/other` })).rejects.toThrow(/subject/);
    await expect(
      new Receiver({ currentSigningKey: 'a', nextSigningKey: 'b' }).verify({ signature, body, url }),
    ).rejects.toThrow();
  });

  it('derives stable default keys from the token, different per token', () => {
    expect(defaultSigningKeys('wf_test_token_0123456789')).toEqual(keys);
    expect(defaultSigningKeys('another-token').current).not.toBe(keys.current);
    expect(keys.current).not.toBe(keys.next);
  });
});

describe('published headers', () => {
  it('reads where a message goes and what goes with it, and its callback as a message of its own', () => {
    const spec = parseMessage(
      'http://127.0.0.1:3000/wf',
      {
        Authorization: 'Bearer qstash-token',
        'Content-Type': 'application/json',
        'Upstash-Forward-X-Tenant': 't1',
        'Upstash-Workflow-RunId': 'wfr_abc',
        'Upstash-Workflow-Init': 'false',
        'Upstash-Workflow-CallType': 'toCallback',
        'Upstash-Method': 'put',
        'Upstash-Delay': '1m30s',
        'Upstash-Retries': '2',
        'Upstash-Retry-Delay': 'pow(2, retried) * 100',
        'Upstash-Callback': 'http://127.0.0.1:3000/wf',
        'Upstash-Callback-Workflow-RunId': 'wfr_abc',
        'Upstash-Callback-Forward-Upstash-Workflow-Callback': 'true',
        'Upstash-Telemetry-Sdk': 'x',
      },
      'payload',
    );
    expect(spec).toMatchObject({
      method: 'PUT',
      delayMs: 90_000,
      retries: 2,
      retryDelay: 'pow(2, retried) * 100',
      workflow: { runId: 'wfr_abc', init: false, callType: 'toCallback' },
      callback: {
        url: 'http://127.0.0.1:3000/wf',
        headers: { 'upstash-workflow-runid': 'wfr_abc', 'upstash-forward-upstash-workflow-callback': 'true' },
      },
    });
    // A call's target gets the call's headers only: not the publish request's credentials, nor the
    // SDK's control headers (a workflow endpoint there would read the call as a step list).
    expect(spec.deliverHeaders).toEqual({ 'content-type': 'application/json', 'x-tenant': 't1' });
  });

  it("delivers the SDK's control headers with a step to the workflow", () => {
    const spec = parseMessage(
      'http://127.0.0.1:3000/wf',
      {
        'Upstash-Workflow-RunId': 'wfr_abc',
        'Upstash-Workflow-Init': 'false',
        'Upstash-Forward-Upstash-Workflow-Sdk-Version': '1',
      },
      '{}',
    );
    expect(spec.deliverHeaders).toEqual({
      'upstash-workflow-runid': 'wfr_abc',
      'upstash-workflow-init': 'false',
      'upstash-workflow-sdk-version': '1',
    });
  });

  it('refuses what it does not support or cannot read, naming the header and the value', () => {
    const attempt = (headers: Record<string, string>) => () => parseMessage('http://127.0.0.1:3000/wf', headers, '');
    expect(attempt({ 'Upstash-Queue-Name': 'q' })).toThrow(/upstash-queue-name/);
    expect(attempt({ 'Upstash-Delay': 'soon' })).toThrow(/Upstash-Delay.*"soon"/);
    expect(attempt({ 'Upstash-Retries': '-1' })).toThrow(/Upstash-Retries/);
    expect(attempt({ 'Upstash-Retry-Delay': 'launch(1)' })).toThrow(/unknown name "launch"/);
    expect(attempt({ 'Upstash-Workflow-RunId': '../etc' })).toThrow(/Upstash-Workflow-RunId/);
    expect(attempt({ 'Upstash-Callback': 'ftp://x' })).toThrow(/http\(s\)/);
    expect(attempt({ 'Upstash-Callback': 'http://127.0.0.1/cb', 'Upstash-Callback-Queue-Name': 'q' })).toThrow(
      /upstash-queue-name/,
    );
    expect(attempt({ 'Upstash-Flow-Control-Key': 'k' })).toThrow(/together/);
    expect(() => parseMessage('not a url', {}, '')).toThrow(QStashHeaderError);
    // A header the runner could not send is the publish's 400, not a delivery failing forever.
    expect(attempt({ 'Upstash-Forward-X-Note': 'a\r\nInjected: 1' })).toThrow(/control characters/);
    expect(attempt({ 'Upstash-Forward-Bad Name': 'x' })).toThrow(/HTTP token/);
    expect(attempt({ 'Upstash-Flow-Control-Key': 'k', 'Upstash-Flow-Control-Value': 'parallelism=0' })).toThrow(
      /parallelism or rate/,
    );
    expect(attempt({ 'Upstash-Flow-Control-Key': 'k', 'Upstash-Flow-Control-Value': 'burst=3' })).toThrow(/parts like/);
  });
});

describe('flow control values', () => {
  it('reads parallelism, rate and period in any order', () => {
    const spec = parseMessage(
      'http://127.0.0.1:3000/wf',
      { 'Upstash-Flow-Control-Key': 'tenant', 'Upstash-Flow-Control-Value': 'rate=10, parallelism=2, period=1m' },
      '',
    );
    expect(spec.flowControl).toEqual({ key: 'tenant', parallelism: 2, rate: 10, periodMs: 60_000 });
  });
});

describe('durations and retry delays', () => {
  it('reads durations as QStash writes them', () => {
    expect(parseDuration('d', '10s')).toBe(10_000);
    expect(parseDuration('d', '1h30m')).toBe(5_400_000);
    expect(parseDuration('d', '250ms')).toBe(250);
    expect(parseDuration('d', '2d')).toBe(172_800_000);
    expect(parseDuration('d', '7')).toBe(7_000);
    expect(() => parseDuration('d', '10 s')).toThrow(/duration/);
    expect(() => parseDuration('d', '999d')).toThrow(/at most 365d/);
  });

  it('evaluates Upstash-Retry-Delay expressions of retried, bounded', () => {
    expect(parseRetryDelay('pow(2, retried) * 1000')(3)).toBe(8_000);
    expect(parseRetryDelay('1000 * (1 + retried)')(2)).toBe(3_000);
    expect(parseRetryDelay('min(5000, 100 * 2 ^ retried)')(10)).toBe(5_000);
    expect(parseRetryDelay('-5')(1)).toBe(0);
    expect(parseRetryDelay('exp(1000)')(1)).toBe(365 * 86_400_000);
    expect(() => parseRetryDelay('1 +')).toThrow(/Upstash-Retry-Delay/);
    expect(() => parseRetryDelay('pow(2)')).toThrow(/takes 2/);
    expect(() => parseRetryDelay('(1')).toThrow(/expected \)/);
  });
});

describe('headers as QStash hands them on', () => {
  it("names a call answer's headers in Go's canonical case, whatever case the target wrote", () => {
    expect(
      ['get-header', 'CONTENT-TYPE', 'x-request-id', 'Fail-Header-Foo', 'www-authenticate'].map(canonicalHeaderName),
    ).toEqual(['Get-Header', 'Content-Type', 'X-Request-Id', 'Fail-Header-Foo', 'Www-Authenticate']);
    // Not an HTTP token: left as it is, as Go leaves it.
    expect(canonicalHeaderName('bad header')).toBe('bad header');
  });

  it("gives a run's headers to its steps and call answers (without the SDK version), not to a call's target", () => {
    const forwarded = { 'x-tenant': 'acme', 'upstash-workflow-sdk-version': '1' };
    expect(runHeadersFor('workflow', 'step')?.(forwarded)).toEqual(forwarded);
    expect(runHeadersFor('plain', 'fromCallback')?.(forwarded)).toEqual({ 'x-tenant': 'acme' });
    expect(runHeadersFor('plain', 'toCallback')).toBeUndefined();
    expect(runHeadersFor('plain', 'failureCall')).toBeUndefined();
  });
});
