/**
 * Text a hostile (or careless) step can print, one sample of every class a terminal would obey,
 * with what a terminal rendering must show instead (view/terminal-text.ts). Shared by the
 * sanitizer's unit test, the `wf logs` and TUI tests and the step-log fuzz.
 */

/**
 * What a terminal must never be handed raw, written here independently of the sanitizer so that
 * the tests check it rather than repeat it: C0 controls but newline and tab, DEL, C1 controls, bidi
 * embeddings, overrides and isolates, and the line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

export function hasRawControl(text: string): boolean {
  return RAW_CONTROL.test(text);
}

const ESC = '\u001b';
const BEL = '\u0007';

/** Every class of hostile text a step can print, with what the terminal must show instead. */
export const HOSTILE: readonly { name: string; text: string; shown: string }[] = [
  {
    name: 'OSC 52 clipboard write',
    text: `${ESC}]52;c;ZWNobyBwd25lZA==${BEL}`,
    shown: '\\x1b]52;c;ZWNobyBwd25lZA==\\a',
  },
  { name: 'clear screen', text: `${ESC}[2J${ESC}[H`, shown: '\\x1b[2J\\x1b[H' },
  { name: 'window title', text: `${ESC}]0;owned${BEL}`, shown: '\\x1b]0;owned\\a' },
  {
    name: 'OSC 8 link',
    text: `${ESC}]8;;https://evil.example${ESC}\\safe${ESC}]8;;${ESC}\\`,
    shown: '\\x1b]8;;https://evil.example\\x1b\\safe\\x1b]8;;\\x1b\\',
  },
  { name: 'C1 CSI and OSC', text: '\u009b2J\u009d0;t\u009c', shown: '\\x9b2J\\x9d0;t\\x9c' },
  {
    name: 'every C1 control',
    text: String.fromCharCode(...Array.from({ length: 32 }, (_, i) => 0x80 + i)),
    shown: Array.from({ length: 32 }, (_, i) => `\\x${(0x80 + i).toString(16)}`).join(''),
  },
  {
    name: 'bidi overrides',
    text: 'a\u202ab\u202bc\u202cd\u202de\u202ef',
    shown: 'a\\u202ab\\u202bc\\u202cd\\u202de\\u202ef',
  },
  { name: 'bidi isolates', text: '\u2066x\u2067y\u2068z\u2069', shown: '\\u2066x\\u2067y\\u2068z\\u2069' },
  { name: 'bare carriage return', text: 'paid: no\rpaid: yes', shown: 'paid: no\\rpaid: yes' },
  { name: 'backspace, NUL, DEL', text: 'a\bb\u0000c\u007f', shown: 'a\\bb\\0c\\x7f' },
  { name: 'line separator', text: 'a\u2028b', shown: 'a\\u2028b' },
];
