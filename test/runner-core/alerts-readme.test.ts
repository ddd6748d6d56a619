import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { alertSignature } from '../../runner-core/alerts/signature.js';

/** The README's receiver check (section "Failure alerts"), run as written against the runner's own signature. */
describe("README: a receiver's check of the alert signature", () => {
  it('accepts what the runner signs, and refuses a changed body, another secret or an old timestamp', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const snippet = /```js\n(import \{ createHmac, timingSafeEqual \} from 'node:crypto';[\s\S]*?)```/.exec(
      readme,
    )?.[1];
    expect(snippet, 'the verification snippet in README.md').toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-readme-'));
    try {
      const file = join(dir, 'verify.mjs');
      writeFileSync(file, snippet!);
      const { verifyWfAlert } = (await import(pathToFileURL(file).href)) as {
        verifyWfAlert: (body: string, header?: string, secret?: string) => boolean;
      };
      const body = JSON.stringify({ type: 'run.failed', runId: 'wfr_x', text: 'é ✓' });
      const secret = 'readme-secret-0123456789';
      const now = Math.floor(Date.now() / 1000);
      expect(verifyWfAlert(body, alertSignature(body, secret, now), secret)).toBe(true);
      expect(verifyWfAlert(`${body} `, alertSignature(body, secret, now), secret)).toBe(false);
      expect(verifyWfAlert(body, alertSignature(body, secret, now), 'another-secret-0123456789')).toBe(false);
      expect(verifyWfAlert(body, alertSignature(body, secret, now - 3600), secret)).toBe(false);
      expect(verifyWfAlert(body, undefined, secret)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
