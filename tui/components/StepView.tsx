import { Box, Text } from 'ink';
import type { Step } from '../../api/dto.js';
import { fit, paint, terminalLine } from '../format.js';
import { glyph, statusColor, type Color } from '../../view/status.js';
import { formatDuration } from '../../view/duration.js';
import { STEP_HEADER_ROWS } from '../layout.js';
import type { Line, Tone } from '../step-lines.js';

export interface StepViewProps {
  step: Step | undefined;
  /** Every line of the step (wrapped to `width`); only `height` of them from `scroll` are drawn. */
  lines: readonly Line[];
  scroll: number;
  width: number;
  height: number;
  color: boolean;
}

const TONE: Record<Tone, { color?: Color; bold?: boolean; dim?: boolean; inverse?: boolean }> = {
  heading: { bold: true },
  label: { bold: true, color: 'cyan' },
  text: {},
  dim: { dim: true },
  mark: { bold: true, color: 'yellow' },
  error: { color: 'red' },
};

/** One step: its kind's details, output or error, and the log of the attempts, scrollable. */
export function StepView({ step, lines, scroll, width, height, color }: StepViewProps) {
  if (!step) return <Text dimColor>No step selected.</Text>;
  const rows = Math.max(1, height - STEP_HEADER_ROWS);
  const shown = lines.slice(scroll, scroll + rows);
  const position = lines.length > rows ? ` lines ${scroll + 1}–${scroll + shown.length} of ${lines.length}` : '';
  const runs = step.reportedExecutions === 1 ? '' : ` · executed ${step.reportedExecutions}×`;
  const failures = step.failures > 0 ? ` · ${step.failures} failed` : '';
  const took = step.durationMs !== null ? formatDuration(step.durationMs) : step.finishedAt === null ? 'running' : '';
  const title = ` · ${step.kind}${took ? ` · ${took}` : ''}${runs}${failures}`;
  const name = terminalLine(`step ${step.index} ${step.name}`);
  const state = `${glyph(step.status)} ${step.status}`;
  const room = Math.max(0, width - position.length - name.length - state.length - 2);
  return (
    <Box flexDirection="column" height={height} width={width}>
      <Text wrap="truncate-end">
        <Text bold>{name}</Text>
        {'  '}
        <Text color={paint(color, statusColor(step.status))}>{state}</Text>
        {fit(title, room)}
        <Text dimColor>{position}</Text>
      </Text>
      {shown.map((line, i) => {
        const tone = TONE[line.tone];
        return (
          <Text
            key={scroll + i}
            wrap="truncate-end"
            bold={tone.bold}
            dimColor={tone.dim}
            color={tone.color && paint(color, tone.color)}
          >
            {line.text === '' ? ' ' : line.text}
          </Text>
        );
      })}
    </Box>
  );
}
