import { SEARCH_HELP } from '../search.js';
import { Text } from 'ink';
import type { View } from '../state.js';

export interface FooterProps {
  view: View;
  filtering: boolean;
  filter: string;
  width: number;
  /** There is an app log: show the `l` key. */
  log?: boolean;
  /** `r` and `R` apply to the selected run (not to an Upstash-protocol one). @default true */
  restartable?: boolean;
}

type Hint = [key: string, label: string];

const MOVE: Hint = ['↑↓/jk', 'move'];
const HINTS: Record<View, Hint[]> = {
  runs: [MOVE, ['enter', 'open'], ['/', 'filter'], ['c', 'cancel'], ['r', 'rerun'], ['R', 'resume'], ['q', 'quit']],
  run: [
    MOVE,
    ['enter', 'step'],
    ['esc', 'back'],
    ['/', 'filter'],
    ['c', 'cancel'],
    ['r', 'rerun'],
    ['R', 'resume'],
    ['q', 'quit'],
  ],
  step: [
    ['↑↓/jk', 'scroll'],
    ['pgup/pgdn', 'page'],
    ['esc', 'back'],
    ['c', 'cancel'],
    ['r', 'rerun'],
    ['R', 'resume'],
    ['q', 'quit'],
  ],
};

const LOG: Hint = ['l', 'logs'];

/** The hints that fit `width`: keys and labels; narrower, shorter keys; narrower still, the keys alone. */
export function footerText(view: View, width: number, log = false, restartable = true): string {
  const keys = restartable ? HINTS[view] : HINTS[view].filter(([key]) => key !== 'r' && key !== 'R');
  const hints = log ? [...keys.slice(0, -1), LOG, ...keys.slice(-1)] : keys;
  const full = hints.map(([key, label]) => `${key} ${label}`).join(' · ');
  if (full.length <= width) return full;
  const compact = hints
    .map(([key, label]) => `${key.replace('/jk', '').replace('pgup/pgdn', 'pg')} ${label}`)
    .join(' ');
  return compact.length <= width
    ? compact
    : hints.map(([key]) => key.replace('/jk', '').replace('pgup/pgdn', 'pg')).join(' ');
}

/** Bottom line: the keys of this view, or the filter prompt while typing one. */
export function Footer({ view, filtering, filter, width, log = false, restartable = true }: FooterProps) {
  if (filtering) {
    return (
      <Text wrap="truncate-start">
        <Text bold>/</Text>
        {filter}
        <Text inverse> </Text>
        <Text dimColor>
          {width >= 50 ? `   enter keep · esc clear${width - filter.length >= 90 ? ` · ${SEARCH_HELP}` : ''}` : ''}
        </Text>
      </Text>
    );
  }
  // A filter stays in sight while it narrows the list (the status line may be showing a notice).
  const active = view === 'runs' && filter !== '' ? `/${filter} ` : '';
  return (
    <Text wrap="truncate-end">
      {active ? <Text bold>{active}</Text> : null}
      <Text dimColor>{footerText(view, width - active.length, log, restartable)}</Text>
    </Text>
  );
}
