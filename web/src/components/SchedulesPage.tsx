/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Run } from '../../../api/dto.js';
import type { Schedule } from '../../../api/schedule-dto.js';
import { formatTime } from '../format.js';
import { paths } from '../router.js';
import { useDashboard } from '../use-dashboard.js';
import { Link } from './Common.js';

const RUNS_SHOWN = 10;
const REFRESH_MS = 2_000;

/** `/schedules`: every cron schedule, its next fire, the runs it started (newest first); delete. */
export function SchedulesPage(): JSX.Element {
  const { api, canWrite, describe, reloads } = useDashboard();
  const [schedules, setSchedules] = useState<Array<{ schedule: Schedule; runs: Run[] }> | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    // Schedules have no live events: the page re-reads them every few seconds while open.
    const timer = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    let gone = false;
    (async () => {
      const list = await api.client.schedules.list();
      const withRuns = await Promise.all(
        list.map(async (schedule) => ({
          schedule,
          runs: (await api.client.list({ scheduleId: schedule.id, limit: RUNS_SHOWN })).runs,
        })),
      );
      if (!gone) {
        setSchedules(withRuns);
        setProblem(null);
      }
    })().catch((error: unknown) => !gone && setProblem(describe(error)));
    return () => {
      gone = true;
    };
  }, [api, tick, reloads]);

  const remove = (id: string): void => {
    api.client.schedules.delete(id).then(
      () => setTick((n) => n + 1),
      (error: unknown) => setProblem(describe(error)),
    );
  };

  return (
    <section class="panel" data-testid="schedules">
      <h2>Schedules</h2>
      {problem ? <p role="alert">{problem}</p> : null}
      {schedules === null ? <p>Loading…</p> : null}
      {schedules !== null && schedules.length === 0 ? (
        <p class="empty">
          No schedules. Add one with <code>wf schedule add &lt;url&gt; --cron '…'</code>.
        </p>
      ) : null}
      {schedules !== null && schedules.length > 0 ? (
        <table class="runs">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>Cron</th>
              <th>Next fire</th>
              <th>Last fired</th>
              <th>Runs started</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {schedules.map(({ schedule, runs }) => (
              <tr key={schedule.id} data-testid={`schedule-${schedule.id}`}>
                <td>
                  <code>{schedule.id}</code>
                  <div class="muted">{schedule.url}</div>
                </td>
                <td>
                  <code>{schedule.cron}</code> <span class="muted">{schedule.timezone}</span>
                </td>
                <td data-testid="next-fire" title={new Date(schedule.nextAt).toISOString()}>
                  {formatTime(schedule.nextAt)}
                </td>
                <td>
                  {schedule.lastFiredAt === null ? 'never' : formatTime(schedule.lastFiredAt)}
                  {schedule.lastRefusal ? (
                    // A tick the runner refused (its origin no longer allowed): skipped, so say why.
                    <div class="muted" data-testid="last-refusal" title={schedule.lastRefusal.message}>
                      tick {formatTime(schedule.lastRefusal.tick)} refused: {schedule.lastRefusal.code}
                    </div>
                  ) : null}
                </td>
                <td data-testid="schedule-runs">
                  {runs.length === 0
                    ? 'none yet'
                    : runs.map((run) => (
                        <div key={run.id}>
                          <Link href={paths.run(run.id)}>{run.id}</Link>{' '}
                          <span class={`status status-${run.status}`}>{run.status}</span>
                        </div>
                      ))}
                </td>
                <td>
                  {canWrite ? (
                    <button type="button" class="button subtle" onClick={() => remove(schedule.id)}>
                      Delete
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
