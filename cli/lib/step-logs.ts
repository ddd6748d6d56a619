import type { Step } from '../../api/dto.js';
import type { RunDetail } from '../../api/parse.js';
import { logRowText, stepLogSections } from '../../view/step-logs.js';
import { terminalSafe } from '../../view/terminal-text.js';
import { CliError } from '../errors.js';
import { stepKindView } from '../../view/step-kinds/index.js';

/**
 * `wf logs <runId> --step <name|index>`: the step's "detailed logs", what each of its executions
 * printed, attempt by attempt (failed ones too), as text or as one JSON `StepLog` per line.
 */

/** The step `which` names: its position when it is a number that is one, else its name. */
export function findStep(steps: readonly Step[], which: string): Step {
  const byIndex = /^\d+$/.test(which) ? steps.find((step) => step.index === Number(which)) : undefined;
  const step = byIndex ?? steps.find((step) => step.name === which);
  if (step) return step;
  const known =
    steps.length === 0
      ? 'the run has no steps yet'
      : `its steps are ${steps.map((s) => `${s.index} "${s.name}"`).join(', ')}`;
  throw new CliError(
    1,
    'NO_SUCH_STEP',
    `Expected --step to name a step of the run (an index or a name), got "${which}": ${known}.`,
  );
}

export function stepLogLines(detail: RunDetail, which: string, json: boolean): string[] {
  const step = findStep(detail.steps, which);
  const logs = detail.logs.filter((log) => log.index === step.index);
  if (json) return logs.map((log) => JSON.stringify(log));
  // What the step printed is the step's: control characters shown as escapes, newlines kept as lines.
  const out = [`step ${step.index} ${step.name} · ${step.status} · ${step.kind}`];
  const sections = stepLogSections(detail.logs, step.index);
  if (sections.length === 0)
    out.push(
      stepKindView(step.kind).printsLogs
        ? '  (printed nothing)'
        : `  (a ${step.kind} step runs in the runner: no logs)`,
    );
  for (const section of sections) {
    out.push(`◆ ${section.heading}`);
    for (const row of section.rows)
      for (const [i, text] of logRowText(row).split('\n').entries()) out.push(i === 0 ? `  ${text}` : `      ${text}`);
    if (section.truncated) out.push(`  ${section.truncated}`);
  }
  return out.flatMap((line) => terminalSafe(line).split('\n'));
}

/** Under a run's story: which steps printed something, and how to read it (nothing when none did). */
export function stepLogsHint(detail: RunDetail): string | undefined {
  if (detail.logs.length === 0) return undefined;
  const counts = new Map<number, { name: string; lines: number }>();
  for (const log of detail.logs) {
    const entry = counts.get(log.index) ?? { name: log.name, lines: 0 };
    entry.lines += log.lines.length + log.dropped;
    counts.set(log.index, entry);
  }
  const steps = [...counts]
    .sort(([a], [b]) => a - b)
    .map(([index, { name, lines }]) => `${index} ${name} (${lines} line${lines === 1 ? '' : 's'})`);
  return terminalSafe(`steps that printed: ${steps.join(', ')} · wf logs ${detail.run.id} --step <index|name>`);
}
