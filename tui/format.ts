import type { Color } from '../view/status.js';
import { terminalSafe } from '../view/terminal-text.js';

/**
 * Text helpers of the terminal dashboard. Status glyphs, colours and durations are the shared
 * view model's (view/status.ts, view/duration.ts).
 */
export type { Color } from '../view/status.js';

/**
 * Whether to colour at all. NO_COLOR (https://no-color.org: set and not empty) turns colour off.
 * Ink's chalk does not read NO_COLOR on a terminal, so the dashboard decides here and its
 * components leave out every `color` prop.
 */
export function colorEnabled(env: Record<string, string | undefined>): boolean {
  return !env.NO_COLOR;
}

/** `color` when colour is on, else undefined (ink then writes no colour codes). */
export function paint(enabled: boolean, color: Color): Color | undefined {
  return enabled ? color : undefined;
}

/** Local wall-clock time; the date too when it is not the day of `now`. */
export function clock(ms: number, now: number, withMs = false): string {
  const date = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${withMs ? '.' + pad(date.getMilliseconds(), 3) : ''}`;
  return new Date(now).toDateString() === date.toDateString()
    ? time
    : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

/**
 * One line of run data as the dashboard may draw it: control characters shown as escapes
 * (view/terminal-text.ts), line breaks and tabs as spaces.
 */
export function terminalLine(text: string): string {
  return terminalSafe(text).replace(/[\n\t]+/g, ' ');
}

/** Cuts `text` to `width` columns, ending in `…` when cut; run data goes through `terminalLine` first. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  const flat = terminalLine(text);
  return flat.length <= width ? flat : flat.slice(0, Math.max(0, width - 1)) + '…';
}

/** Truncates or pads `text` to exactly `width` columns. */
export function fit(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const cut = truncate(text, width);
  return align === 'left' ? cut.padEnd(width) : cut.padStart(width);
}

/** A run's workflow as people name it: the URL without its scheme (`localhost:3000/api/workflow`). */
export function workflowPath(url: string): string {
  return terminalLine(url).replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
}

/** JSON text pretty-printed (two spaces); anything else as it is. */
export function prettyJson(text: string): string {
  const trimmed = text.trim();
  if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return text;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return text;
  }
}
