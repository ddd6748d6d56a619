/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { BulkActionName, BulkResult } from '../../../api/bulk.js';
import type { RunStatus } from '../../../api/dto.js';
import type { RunSearch } from '../router.js';
import { useDashboard } from '../use-dashboard.js';

const LABELS: Record<BulkActionName, string> = { resume: 'Resume', cancel: 'Cancel', rerun: 'Rerun' };

/** Which actions make sense for the listed runs: resume only failed/cancelled, cancel only unfinished. */
function actionsFor(status: RunStatus | null): BulkActionName[] {
  if (status === 'failed' || status === 'cancelled') return ['resume', 'rerun'];
  if (status === 'completed') return ['rerun'];
  if (status === null) return ['rerun'];
  return ['cancel', 'rerun'];
}

/**
 * A bulk action on every run the list's filter matches (not only the loaded page): the runner
 * counts them first (a dry run), the user confirms that number, then the runner acts. Mounted
 * while the list is shown even when it is empty, so the result stays visible after the acted-on
 * runs leave the list (resumed runs are no longer `failed`).
 */
export function BulkActions(props: {
  status: RunStatus | null;
  search?: RunSearch;
  hasRuns: boolean;
  onDone: () => void;
}): JSX.Element | null {
  const { api, canWrite, describe } = useDashboard();
  const { status } = props;
  const [pending, setPending] = useState<{ action: BulkActionName; matched: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  if (!canWrite || (!props.hasRuns && message === null && pending === null)) return null;
  // The same filter the list shows (status and search), so the count is what the user sees listed.
  const search = props.search ?? {};
  const filter = { ...search, ...(status !== null && { status }) };
  const what = `${status === null ? 'runs' : `${status} runs`}${Object.keys(search).length > 0 ? ' matching the search' : ''}`;

  const count = async (action: BulkActionName): Promise<void> => {
    setBusy(true);
    setMessage(null);
    try {
      const { matched } = await api.bulk({ action, filter, dryRun: true });
      setPending({ action, matched });
    } catch (failure) {
      setMessage(describe(failure));
    }
    setBusy(false);
  };

  const confirm = async (action: BulkActionName): Promise<void> => {
    setBusy(true);
    try {
      const result: BulkResult = await api.bulk({ action, filter });
      const refused =
        result.failed.length > 0 ? `, ${result.failed.length} refused (${result.failed[0]!.message})` : '';
      setMessage(`${LABELS[action]}: ${result.done} of ${result.matched} done${refused}.`);
      props.onDone();
    } catch (failure) {
      setMessage(describe(failure));
    }
    setPending(null);
    setBusy(false);
  };

  return (
    <div class="actions bulk" role="toolbar" aria-label="Bulk actions" data-testid="bulk-actions">
      {pending === null ? (
        !props.hasRuns ? null : (
          actionsFor(status).map((action) => (
            <button key={action} type="button" class="button subtle" onClick={() => count(action)} disabled={busy}>
              {LABELS[action]} all {what}…
            </button>
          ))
        )
      ) : pending.matched === 0 ? (
        <span class="confirm" role="status">
          <span>No {what} now.</span>
          <button type="button" class="button subtle" onClick={() => setPending(null)}>
            OK
          </button>
        </span>
      ) : (
        <span class="confirm" role="dialog" aria-label="Confirm bulk action" data-testid="bulk-confirm">
          <span>
            {LABELS[pending.action]} {pending.matched} {what}?
          </span>
          <button
            type="button"
            class={`button ${pending.action === 'cancel' ? 'danger' : ''}`}
            onClick={() => confirm(pending.action)}
            disabled={busy}
          >
            Yes, {pending.action} {pending.matched}
          </button>
          <button type="button" class="button subtle" onClick={() => setPending(null)} disabled={busy}>
            No
          </button>
        </span>
      )}
      {message ? (
        <span class="muted" role="status" data-testid="bulk-result">
          {message}
        </span>
      ) : null}
    </div>
  );
}
