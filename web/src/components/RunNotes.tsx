/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { runNotes } from '../../../view/run-notes.js';
import type { Run } from '../../../api/dto.js';
import { formatTime } from '../format.js';

/**
 * A run's outage ("app unreachable since …, next try at …") and its failureFunction call, in the
 * words `wf logs` and the TUI use (view/run-notes.ts). `compact`: the runs list, where a
 * delivered call is not worth a line.
 */
export function RunNotes(props: { run: Run; now: number; compact?: boolean; testId?: string }): JSX.Element | null {
  const { run, now, compact = false, testId } = props;
  const notes = runNotes(run, (ms) => formatTime(ms, now)).filter((note) => !compact || note.tone !== 'ok');
  if (notes.length === 0) return null;
  return (
    <span class={`run-notes${compact ? ' small' : ''}`} data-testid={testId ?? 'run-notes'}>
      {notes.map((note) => (
        <span
          key={note.kind}
          class={`run-note run-note-${note.tone}`}
          data-kind={note.kind}
          role={note.tone === 'ok' ? undefined : 'status'}
        >
          {note.text}
        </span>
      ))}
    </span>
  );
}
