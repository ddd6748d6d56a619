import type { Schedule } from '../api/schedule-dto.js';
import { formatDuration } from '../view/duration.js';

/**
 * The run list's one-line schedules section: how many, and the next to fire.
 * Empty when there are none (or the source cannot list them), so runs-only users see nothing new.
 */
export function scheduleSummary(schedules: readonly Schedule[] | null, now: number): string {
  if (!schedules || schedules.length === 0) return '';
  const next = schedules.reduce((a, b) => (b.nextAt < a.nextAt ? b : a));
  const count = `${schedules.length} schedule${schedules.length === 1 ? '' : 's'}`;
  return `${count} · next ${next.id.slice(0, 12)} "${next.cron}" in ${formatDuration(Math.max(0, next.nextAt - now))}`;
}
