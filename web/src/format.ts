/** Web-only text helpers; durations, status lists, step values and attempts are the shared view model's (view/). */

/** Local clock time; the date too when it is not today. */
export function formatTime(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '–';
  const date = new Date(ms);
  const time = date.toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  return date.toDateString() === new Date(now).toDateString() ? time : `${date.toLocaleDateString()} ${time}`;
}

/** A raw body as people read it: pretty JSON when it is JSON, else the text as it is. */
export function prettyBody(text: string | null | undefined): string {
  if (text === null || text === undefined || text === '') return '';
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.stringify(JSON.parse(trimmed), null, 2);
    } catch {}
  }
  return text;
}

/** Sorted header entries, for a stable table. */
export function headerEntries(headers: Record<string, string> | null | undefined): [string, string][] {
  return Object.entries(headers ?? {}).sort(([a], [b]) => a.localeCompare(b));
}

/**
 * An attempt's outcome as one CSS class word: `failure-function done` → `failure-function-done`,
 * `alert delivered` → `alert-delivered` (a space would split it into two unrelated classes).
 */
export function outcomeClass(outcome: string): string {
  return outcome.trim().replace(/[^a-zA-Z0-9-]+/g, '-');
}
