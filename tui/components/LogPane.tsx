import { Box, Text } from 'ink';
import type { LogEntry } from '../log-feed.js';
import { paint, truncate } from '../format.js';

export interface LogPaneProps {
  /** What runs (the app's command), on the title line. */
  title: string;
  lines: readonly LogEntry[];
  /** Lines received in all (more than `lines` once the buffer dropped some). */
  total: number;
  width: number;
  /** Rows, title included. */
  height: number;
  color: boolean;
}

// Dev servers colour their output when they think they may; escapes and other control characters
// would break the layout, so the pane shows plain text.
// eslint-disable-next-line no-control-regex
const CONTROL = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007|[\u0000-\u0008\u000b-\u001f\u007f]/g;

export function plainText(text: string): string {
  return text.replace(CONTROL, '');
}

/** The newest lines of the app's output and of what `wf dev` found, under a title rule. */
export function LogPane({ title, lines, total, width, height, color }: LogPaneProps) {
  const rows = Math.max(0, height - 1);
  const shown = lines.slice(-rows);
  const count = total === 0 ? 'no output yet' : `${total} line${total === 1 ? '' : 's'}`;
  // The title (the app's command, often with long paths) gives way first, from its start, so the
  // script's name, the count and the key stay visible.
  const tail = ` · ${count} · l hides `;
  const room = Math.max(8, width - tail.length - 8);
  const shortTitle = title.length <= room ? title : '…' + title.slice(-(room - 1));
  const head = truncate(`─ log · ${shortTitle}${tail}`, width);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text dimColor>{head + '─'.repeat(Math.max(0, width - head.length))}</Text>
      {shown.map((entry, i) => {
        const own = entry.source === 'wf';
        const tone =
          entry.level === 'error'
            ? 'red'
            : entry.level === 'warn'
              ? 'yellow'
              : own
                ? 'cyan'
                : entry.stream === 'stderr'
                  ? 'yellow'
                  : undefined;
        const text = truncate((own ? 'wf: ' : '') + plainText(entry.text), width);
        return (
          <Text key={total - shown.length + i} wrap="truncate-end" color={tone ? paint(color, tone) : undefined}>
            {text || ' '}
          </Text>
        );
      })}
    </Box>
  );
}
