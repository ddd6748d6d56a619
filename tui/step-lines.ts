import type { Attempt, Run, Step, StepLog } from '../api/dto.js';
import type { SerializedError } from '../protocol/errors.js';
import { attemptsOfStep, isLineOf, noAttemptsText, outcomeLines } from '../view/attempts.js';
import { formatDuration } from '../view/duration.js';
import { stepKindView } from '../view/step-kinds/index.js';
import { displayOutput, encodedOutput } from '../view/step-value.js';
import { logRowText, stepLogSections, type LogTone } from '../view/step-logs.js';
import { clock, prettyJson } from './format.js';
import { terminalSafe } from '../view/terminal-text.js';

/** How a line of the step view is drawn: `mark` is this step's own line in a response body. */
export type Tone = 'heading' | 'label' | 'text' | 'dim' | 'mark' | 'error';

export interface Line {
  text: string;
  tone: Tone;
}

const line = (text: string, tone: Tone = 'text'): Line => ({ text, tone });
const block = (text: string, indent: string, tone: Tone = 'text'): Line[] =>
  text.split('\n').map((t) => line(indent + t, tone));

function headers(record: Record<string, string> | null, indent: string): Line[] {
  const entries = Object.entries(record ?? {});
  return entries.length === 0
    ? [line(`${indent}(no headers)`, 'dim')]
    : entries.map(([k, v]) => line(`${indent}${k}: ${v}`, 'dim'));
}

function errorLines(error: SerializedError, indent: string): Line[] {
  const [first, ...rest] = (
    error.stack?.includes(error.message) ? error.stack : `${error.name}: ${error.message}\n${error.stack ?? ''}`
  )
    .trimEnd()
    .split('\n');
  return [line(indent + (first ?? error.message), 'error'), ...rest.map((t) => line(`${indent}  ${t.trim()}`, 'dim'))];
}

function attemptSummary(a: Attempt): string {
  const status = a.responseStatus === null ? 'no response' : `HTTP ${a.responseStatus}`;
  return `attempt ${a.seq} · ${clock(a.startedAt, a.startedAt, true)} · ${formatDuration(a.durationMs)} · ${status} · ${a.outcome}${a.error ? `: ${a.error.message}` : ''}`;
}

function attemptLines(a: Attempt, step: Step): Line[] {
  const out = [
    line(`◆ ${attemptSummary(a)}`, 'heading'),
    line(`    Request  POST ${a.requestUrl}`, 'label'),
    ...headers(a.requestHeaders, '      '),
  ];
  if (a.requestBody !== '') out.push(line('      body:', 'dim'), ...block(prettyJson(a.requestBody), '      '));
  out.push(line(`    Response  ${a.responseStatus ?? 'none'}`, 'label'));
  if (a.responseHeaders) out.push(...headers(a.responseHeaders, '      '));
  if (a.responseBody) out.push(line('      body (one outcome per line):', 'dim'));
  for (const outcome of outcomeLines(a)) {
    out.push(isLineOf(outcome, step.index) ? line(`    ▶ ${outcome.text}`, 'mark') : line(`      ${outcome.text}`));
  }
  if (a.error) out.push(line('    Error', 'label'), ...errorLines(a.error, '      '));
  return out;
}

/** The head of the step view: what its kind says (view/step-kinds/), its request's headers and body when it sends one. */
function kindLines(step: Step): Line[] {
  const section = stepKindView(step.kind).section(step, (ms) => clock(ms, step.startedAt, true));
  if (!section) return [];
  const out = [line(section.label, 'label')];
  if (section.headers) out.push(...headers(section.headers, '  '));
  if (section.body !== undefined) out.push(...block(prettyJson(section.body), '  '));
  return out;
}

const LOG_TONE: Record<LogTone, Tone> = { text: 'text', dim: 'dim', warn: 'mark', error: 'error' };

/** What the step printed, attempt by attempt (its "detailed logs"); nothing for steps the runner resolves. */
function logLines(step: Step, logs: readonly StepLog[]): Line[] {
  if (!stepKindView(step.kind).printsLogs) return [];
  const sections = stepLogSections(logs, step.index);
  if (sections.length === 0) return [line(''), line('Logs · printed nothing', 'label')];
  const out = [
    line(''),
    line(`Logs · ${sections.length === 1 ? '1 attempt' : `${sections.length} attempts`} printed`, 'label'),
  ];
  for (const section of sections) {
    out.push(line(`◇ ${section.heading}`, 'heading'));
    for (const row of section.rows) out.push(...block(logRowText(row), '  ', LOG_TONE[row.tone]));
    if (section.truncated) out.push(line(`  ${section.truncated}`, 'dim'));
  }
  return out;
}

/** Everything the step view shows about one step, unwrapped. */
export function stepDetailLines(
  step: Step,
  attempts: readonly Attempt[],
  logs: readonly StepLog[] = [],
  run?: Pick<Run, 'protocol'>,
): Line[] {
  const out: Line[] = [...kindLines(step)];
  if (step.status === 'succeeded' || encodedOutput(step) !== null) {
    out.push(line(stepKindView(step.kind).outputLabel(step), 'label'), ...block(displayOutput(step), '  '));
  }
  if (step.error) out.push(line('Error', 'label'), ...errorLines(step.error, '  '));
  out.push(...logLines(step, logs));
  const own = new Set(attemptsOfStep(run, attempts, step).map((a) => a.seq));
  if (run?.protocol === 'upstash') {
    // QStash deliveries: the SDK's answers have no outcome lines to mark.
    out.push(line(''), line(`Attempts · ${own.size} of ${attempts.length} deliveries ran this step (◆)`, 'label'));
    if (own.size === 0) out.push(line(`  ${noAttemptsText(run)}`, 'dim'));
  } else
    out.push(
      line(''),
      line(`Attempts · ${own.size} of ${attempts.length} drive requests concern this step (◆, its lines ▶)`, 'label'),
    );
  for (const a of attempts)
    out.push(...(own.has(a.seq) ? attemptLines(a, step) : [line(`  ${attemptSummary(a)}`, 'dim')]));
  return out;
}

/** Spaces to the next multiple of 8 columns for each tab: a tab's width on a terminal. */
function expandTabs(text: string): string {
  // Each piece up to a tab starts on a tab stop (the one before it ended on one).
  return text.replace(/[^\t]*\t/g, (piece) => piece.slice(0, -1) + ' '.repeat(8 - ((piece.length - 1) % 8)));
}

/**
 * Lines as the terminal may draw them: what workflow code wrote (logs, outputs, errors, headers,
 * bodies) with its control characters shown as escapes (view/terminal-text.ts), a line break it
 * holds as a line of its own (with the indent), tabs as spaces.
 */
export function terminalLines(lines: readonly Line[]): Line[] {
  return lines.flatMap((l) => {
    const [first = '', ...rest] = terminalSafe(l.text).split('\n');
    const indent = ' '.repeat(first.length - first.trimStart().length);
    return [first, ...rest.map((t) => indent + t)].map((text) => ({ text: expandTabs(text), tone: l.tone }));
  });
}

/** Hard-wraps lines to `width` columns; continuation lines keep the indent. */
export function wrapLines(lines: readonly Line[], width: number): Line[] {
  const out: Line[] = [];
  const w = Math.max(8, width);
  for (const l of lines) {
    if (l.text.length <= w) {
      out.push(l);
      continue;
    }
    const indent = ' '.repeat(Math.min(l.text.length - l.text.trimStart().length + 2, w >> 1));
    out.push({ text: l.text.slice(0, w), tone: l.tone });
    for (let i = w; i < l.text.length; i += w - indent.length)
      out.push({ text: indent + l.text.slice(i, i + w - indent.length), tone: l.tone });
  }
  return out;
}

let memo:
  | {
      step: Step;
      attempts: readonly Attempt[];
      logs: readonly StepLog[];
      width: number;
      protocol: Run['protocol'];
      lines: Line[];
    }
  | undefined;

/** The step view's wrapped lines; remembered for the last step, so scrolling does not rebuild them. */
export function stepViewLines(
  step: Step,
  attempts: readonly Attempt[],
  width: number,
  logs: readonly StepLog[] = [],
  run?: Pick<Run, 'protocol'>,
): Line[] {
  const protocol = run?.protocol;
  if (
    memo &&
    memo.step === step &&
    memo.attempts === attempts &&
    memo.logs === logs &&
    memo.width === width &&
    memo.protocol === protocol
  )
    return memo.lines;
  const lines = wrapLines(terminalLines(stepDetailLines(step, attempts, logs, run)), width);
  memo = { step, attempts, logs, width, protocol, lines };
  return lines;
}
