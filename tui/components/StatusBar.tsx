import { Box, Text } from 'ink';
import type { RunStatus } from '../../api/dto.js';
import { paint, truncate } from '../format.js';
import { glyph, statusColor } from '../../view/status.js';
import type { StatusCounts } from '../run-table.js';
import type { Connection } from '../state.js';

export interface StatusBarProps {
  title: string;
  /** Where the data comes from (the runner's URL). */
  source: string;
  connection: Connection;
  total: number;
  counts: StatusCounts;
  /** Second line: a notice when there is one, else `context` (where you are, or how to connect apps). */
  notice: { text: string; error: boolean } | null;
  context: string;
  width: number;
  color: boolean;
}

const CONNECTION: Record<Connection, { glyph: string; text: string; color: 'green' | 'yellow' | 'red' }> = {
  connecting: { glyph: '○', text: 'connecting', color: 'yellow' },
  live: { glyph: '●', text: 'live', color: 'green' },
  offline: { glyph: '✗', text: 'offline, retrying', color: 'red' },
};

const SHOWN: RunStatus[] = ['running', 'sleeping', 'waiting', 'queued', 'failed', 'completed', 'cancelled'];

/** Top two lines: title, runner URL, connection, runs per status; then a notice or the context. */
export function StatusBar({ title, source, connection, total, counts, notice, context, width, color }: StatusBarProps) {
  const link = CONNECTION[connection];
  const statuses = SHOWN.filter((status) => counts[status] > 0);
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end">
        <Text bold>{title}</Text>
        {' · '}
        {source}
        {' · '}
        <Text color={paint(color, link.color)}>
          {link.glyph} {link.text}
        </Text>
        {' · '}
        {total} run{total === 1 ? '' : 's'}
        {statuses.map((status) => (
          <Text key={status}>
            {' · '}
            <Text color={paint(color, statusColor(status))}>
              {glyph(status)} {counts[status]}
            </Text>{' '}
            {status}
          </Text>
        ))}
      </Text>
      {notice ? (
        <Text wrap="truncate-end" color={paint(color, notice.error ? 'red' : 'green')}>
          {notice.error ? '✗ ' : '✓ '}
          {truncate(notice.text, width - 2)}
        </Text>
      ) : (
        <Text wrap="truncate-end" dimColor>
          {truncate(context, width) || ' '}
        </Text>
      )}
    </Box>
  );
}
