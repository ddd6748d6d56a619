import { describe, expect, it } from 'vitest';
import { alertOptions } from '../../cli/lib/alert-flags.js';

describe('alertOptions', () => {
  it('is off without a webhook, whatever else is set', () => {
    expect(alertOptions({}, {})).toBeUndefined();
    expect(alertOptions({ publicUrl: 'https://wf.example.com' }, { WF_ALERT_SECRET: 'x'.repeat(20), WF_ALERT_WEBHOOK: '' })).toBeUndefined();
  });

  it('takes the flags over the environment, and the secret from the environment only', () => {
    const env = { WF_ALERT_WEBHOOK: 'https://env.example.com/hook', WF_PUBLIC_URL: 'https://env.example.com', WF_ALERT_SECRET: 's'.repeat(20) };
    expect(alertOptions({}, env)).toEqual({ webhookUrl: 'https://env.example.com/hook', publicUrl: 'https://env.example.com', secret: 's'.repeat(20) });
    expect(alertOptions({ alertWebhook: 'https://flag.example.com/hook', publicUrl: 'https://flag.example.com' }, env)).toEqual({
      webhookUrl: 'https://flag.example.com/hook', publicUrl: 'https://flag.example.com', secret: 's'.repeat(20),
    });
  });
});
