import { useInput, type Key } from 'ink';
import { useRef, type Dispatch } from 'react';
import { NOT_RESTARTABLE, restartable } from '../../view/protocol.js';
import { selectedRunId } from '../selectors.js';
import { reducer, type Action, type DashboardState, type KeyAction } from '../state.js';

export interface KeymapHandlers {
  cancel(runId: string): void;
  rerun(runId: string): void;
  resume(runId: string): void;
  quit(): void;
}

export type KeyFlags = Partial<Key>;

/** What a key press means: a reducer action, an effect (on the selected run), or nothing. */
export type KeyResult =
  | Action
  | { effect: 'quit' }
  | { effect: 'cancel' | 'rerun' | 'resume'; runId: string }
  | undefined;

/** The movement a key means, the same in every view; undefined for the other keys. */
export function keyAction(input: string, key: KeyFlags): KeyAction | undefined {
  if (key.upArrow || input === 'k') return 'up';
  if (key.downArrow || input === 'j') return 'down';
  if (key.pageUp || (key.ctrl && input === 'u')) return 'page-up';
  if (key.pageDown || (key.ctrl && input === 'd') || input === ' ') return 'page-down';
  if (key.home || input === 'g') return 'home';
  if (key.end || input === 'G') return 'end';
  if (key.return || key.rightArrow) return 'enter';
  if (key.escape || key.backspace || key.delete || key.leftArrow || input === 'h') return 'back';
  return undefined;
}

/** Pure: what one key press does in `state`. */
export function interpretKey(state: DashboardState, input: string, key: KeyFlags): KeyResult {
  if (state.filtering) {
    if (key.escape) return { type: 'filter-clear' };
    if (key.return) return { type: 'filter-close' };
    if (key.backspace || key.delete) return { type: 'filter-change', text: state.filter.slice(0, -1) };
    if (key.upArrow || key.downArrow) return { type: 'key', key: key.upArrow ? 'up' : 'down' };
    const text = input.replace(/[\u0000-\u001f\u007f]/g, '');
    return text !== '' && !key.ctrl && !key.meta ? { type: 'filter-change', text: state.filter + text } : undefined;
  }
  const move = keyAction(input, key);
  if (move) return { type: 'key', key: move };
  const runId = selectedRunId(state);
  if (input === '/') return { type: 'filter-open' };
  // `l` shows or hides the app's log (only when there is one: `wf dev` runs the app).
  if (input === 'l') return state.log.enabled ? { type: 'log-toggle' } : undefined;
  if (input === 'q') return { effect: 'quit' };
  if (input === 'c' && runId) return { effect: 'cancel', runId };
  // An Upstash-protocol run is its app's to start: say so rather than ask the runner (it answers 409).
  const run = runId === undefined ? undefined : state.runs.get(runId);
  if ((input === 'r' || input === 'R') && run && !restartable(run))
    return { type: 'notice', text: NOT_RESTARTABLE, error: true };
  if (input === 'r' && runId) return { effect: 'rerun', runId };
  // Shift-r: resume a failed or cancelled run from its failed step (the runner refuses other runs, and the notice says why).
  if (input === 'R' && runId) return { effect: 'resume', runId };
  return undefined;
}

/**
 * A chunk of plain characters is several key presses (typed fast, or sent by `tmux send-keys`),
 * which Ink hands over as one string; special keys come alone.
 */
function presses(input: string, key: Key): [string, KeyFlags][] {
  if (input.length <= 1 || key.ctrl || key.meta || key.escape) return [[input, key]];
  return [...input].map((ch): [string, KeyFlags] =>
    ch === '\r' || ch === '\n' ? ['', { return: true }] : ch === '\u007f' ? ['', { backspace: true }] : [ch, {}],
  );
}

/** What the keys do: actions go to the reducer; `c`, `r`, `R` and `q` act through `handlers`. */
export function useKeymap(
  state: DashboardState,
  dispatch: Dispatch<Action>,
  handlers: KeymapHandlers,
  isActive = true,
): void {
  const latest = useRef(state);
  latest.current = state;
  useInput(
    (input, key) => {
      // Each press sees the state the previous ones made (the reducer is pure, so running it here is safe).
      let current = latest.current;
      for (const [ch, flags] of presses(input, key)) {
        const result = interpretKey(current, ch, flags);
        if (!result) continue;
        if ('effect' in result) {
          if (result.effect === 'quit') return handlers.quit();
          handlers[result.effect](result.runId);
          continue;
        }
        current = reducer(current, result);
        dispatch(result);
      }
      latest.current = current;
    },
    { isActive },
  );
}
