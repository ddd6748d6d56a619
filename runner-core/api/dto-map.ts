import { scheduleIdOf } from '../schedules/service.js';
import { stringify } from 'devalue';
import type { Run as RunDto, RunPage as RunPageDto, Step as StepDto } from '../../api/dto.js';
import type { RunnerEvent as RunnerEventDto } from '../../api/events.js';
import { parentOf } from '../../api/links.js';
import { decodeValue } from '../../protocol/values.js';
import { publicStep } from '../drive/call-credentials.js';
import type { RunnerEvent } from '../commit/events.js';
import { runnerKind } from '../step-kinds/index.js';
import type { Run, RunPage, Step } from '../store/types.js';

/**
 * The API edge: the runner's records as the contract's DTOs (api/dto.ts). The one place that
 * turns a stored value (devalue text) into the readable `output` beside the faithful
 * `outputEncoded`, for every route and event that carries runs or steps.
 */

/**
 * `{ output, outputEncoded }` for stored devalue text: `output` only when the value comes back
 * from JSON exactly as it was. Checked by encoding the JSON round trip again and comparing texts,
 * so anything JSON would change (a Date, Map, BigInt, undefined, -0, a shared reference) stays
 * only in `outputEncoded`.
 */
export function outputFields(text: string | null): { output?: unknown; outputEncoded: string | null } {
  if (text === null) return { outputEncoded: null };
  try {
    const value = decodeValue(text);
    const json = JSON.stringify(value);
    if (json !== undefined) {
      const back: unknown = JSON.parse(json);
      if (stringify(back) === text) return { output: back, outputEncoded: text };
    }
  } catch {} // unreadable or not JSON-representable (a BigInt throws in JSON.stringify): encoded only
  return { outputEncoded: text };
}

export function runDto(run: Run): RunDto {
  // The limits stay in the store (a rerun reuses them); the API shows the key alone.
  // The delivery schedules stay there too: the API shows each delivery's state and attempts.
  const { output, flowControl: _flowControl, failureCallNextAt: _f, alertNextAt: _a, ...rest } = run;
  const scheduleId = scheduleIdOf(run.idempotencyKey);
  return { ...rest, ...outputFields(output), ...parentOf(run), ...(scheduleId !== null && { scheduleId }) };
}

/**
 * A step as the API shows it: its call's sealed credentials dropped (`publicStep`), its value
 * mapped, and what its kind adds (an invoke's child run: step-kinds/).
 */
export function stepDto(step: Step): StepDto {
  const { output, ...rest } = publicStep(step);
  return { ...rest, ...outputFields(output), ...runnerKind(step.kind)?.dto(step) };
}

export function runPageDto(page: RunPage): RunPageDto {
  return { runs: page.runs.map(runDto), nextCursor: page.nextCursor };
}

export function eventDto(event: RunnerEvent): RunnerEventDto {
  switch (event.type) {
    case 'run':
      return { type: 'run', run: runDto(event.run) };
    case 'step':
      return { type: 'step', step: stepDto(event.step) };
    case 'attempt':
      return event;
  }
}
