import { useEffect, useState } from 'react';
import type { Schedule } from '../../api/schedule-dto.js';
import type { DataSource } from '../data-source.js';

/**
 * The runner's schedules, re-read every `everyMs` (they have no live events); null until the first
 * answer, or when the source cannot list them. A failed read keeps the last answer: the status
 * bar already says when the runner is unreachable.
 */
export function useSchedules(source: DataSource, everyMs = 2_000): Schedule[] | null {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  useEffect(() => {
    const list = source.listSchedules;
    if (!list) return;
    let gone = false;
    const read = (): void => {
      list().then(
        (next) => !gone && setSchedules(next),
        () => {},
      );
    };
    read();
    const timer = setInterval(read, everyMs);
    return () => {
      gone = true;
      clearInterval(timer);
    };
  }, [source, everyMs]);
  return schedules;
}
