import type { RunStatus, StepStatus } from '../api/dto.js';

/**
 * Text helpers of the dashboard, also used by `wf logs` (cli/lib/format.ts imports them, as cli/
 * depends on tui/). The glyphs carry the meaning, so everything reads the same with NO_COLOR;
 * colour only decorates.
 */
const GLYPH: Record<RunStatus | StepStatus, string> = {
  queued: '○',
  running: '▶',
  sleeping: '◔',
  waiting: '◌',
  completed: '✓',
  succeeded: '✓',
  retrying: '↻',
  failed: '✗',
  cancelled: '⊘',
};

export type Color = 'green' | 'red' | 'yellow' | 'cyan' | 'blue' | 'magenta' | 'gray';

const COLOR: Record<RunStatus | StepStatus, Color> = {
  queued: 'gray',
  running: 'cyan',
  sleeping: 'blue',
  waiting: 'magenta',
  completed: 'green',
  succeeded: 'green',
  retrying: 'yellow',
  failed: 'red',
  cancelled: 'gray',
};

export function glyph(status: RunStatus | StepStatus): string {
  return GLYPH[status] ?? '?';
}

export function statusColor(status: RunStatus | StepStatus): Color {
  return COLOR[status] ?? 'gray';
}

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

/** 1.5ms, 12ms, 3.20s, 4m05s, 2h03m: short and stable in width. */
export function duration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '';
  if (ms < 9.95) return `${Math.max(0, ms).toFixed(1)}ms`;
  if (ms < 999.5) return `${Math.round(ms)}ms`;
  if (ms < 59_995) return `${(ms / 1000).toFixed(2)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Local wall-clock time; the date too when it is not the day of `now`. */
export function clock(ms: number, now: number, withMs = false): string {
  const date = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${withMs ? '.' + pad(date.getMilliseconds(), 3) : ''}`;
  return new Date(now).toDateString() === date.toDateString() ? time : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

/** Cuts `text` to `width` columns, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  const flat = text.replace(/[\r\n\t]+/g, ' ');
  return flat.length <= width ? flat : flat.slice(0, Math.max(0, width - 1)) + '…';
}

/** Truncates or pads `text` to exactly `width` columns. */
export function fit(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const cut = truncate(text, width);
  return align === 'left' ? cut.padEnd(width) : cut.padStart(width);
}

/** A run's workflow as people name it: the URL without its scheme (`localhost:3000/api/workflow`). */
export function workflowPath(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
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
