/**
 * Run data as a terminal may show it. Step logs, outputs, errors, names, headers and bodies come
 * from workflow code and the services it called, and a terminal obeys control characters: ESC
 * starts sequences that write the clipboard (OSC 52), clear the screen, retitle the window, or
 * draw links whose text lies about their target (OSC 8); C1 characters (U+0080–U+009F) are the
 * same commands in one code point on terminals that take 8-bit controls; a bare carriage return
 * writes over what a line said, and bidi overrides reorder what is read (Trojan Source).
 * Every terminal rendering of run data (`wf logs` and `wf runs` but their `--json`, `wf dev
 * --no-tui`, the terminal dashboard) passes its text through `terminalSafe` first.
 */

/**
 * What is escaped: C0 controls but newline and tab, DEL, C1 controls, the bidi embeddings,
 * overrides, isolates and marks, and the line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same set without `g`: `test` on a global regex moves its `lastIndex` between calls. */
const UNSAFE_ANY = new RegExp(UNSAFE.source);

const NAMED: Readonly<Record<string, string>> = {
  '\r': '\\r',
  '\u001b': '\\x1b',
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
  '\u0000': '\\0',
};

/** The visible stand-in for one unsafe character: `\x1b`, `\r`, `\x9b`, `\u202e`. */
function visible(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every character a terminal would act on replaced by a visible escape; newlines and
 * tabs stay (a CRLF is a newline), so multi-line output still reads as lines.
 * @example terminalSafe('ok\u001b]52;c;ZXZpbA==\u0007') // 'ok\\x1b]52;c;ZXZpbA==\\a'
 */
export function terminalSafe(text: string): string {
  if (!UNSAFE_ANY.test(text)) return text;
  return text.replace(/\r\n/g, '\n').replace(UNSAFE, visible);
}
