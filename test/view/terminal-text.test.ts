import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../view/terminal-text.js';
import { hasRawControl, HOSTILE } from '../helpers/hostile-text.js';

/** Finding 4 of issue 19: what a step printed must not command the terminal that shows it. */

describe('terminalSafe', () => {
  for (const { name, text, shown } of HOSTILE) {
    it(`shows ${name} as visible escapes`, () => {
      const safe = terminalSafe(text);
      expect(safe).toBe(shown);
      expect(hasRawControl(safe)).toBe(false);
      expect(hasRawControl(text)).toBe(true);
    });
  }

  it('keeps newlines, tabs and CRLF line ends as line breaks, and plain text as it is', () => {
    expect(terminalSafe('one\n\ttwo\r\nthree')).toBe('one\n\ttwo\nthree');
    const plain = 'héllo wörld 😀 日本 → ok';
    expect(terminalSafe(plain)).toBe(plain);
  });

  it('leaves no C0, C1 or bidi control of the whole range in place', () => {
    const all = Array.from({ length: 0x2070 }, (_, code) => String.fromCharCode(code)).join('');
    const safe = terminalSafe(all);
    expect(hasRawControl(safe)).toBe(false);
  });
});
