import { PROTOCOL_VERSION } from '../../protocol/headers.js';
import type { DriveRequest, StepRecord } from '../../protocol/messages.js';
import { decodeOutcome, OutcomeLineSplitter, type Outcome } from '../../protocol/outcome.js';
import { signRequest } from '../../protocol/signing.js';
import { encodeValue } from '../../protocol/values.js';

export interface DriveInit {
  runId: string;
  /** The raw start body text. */
  body: string;
  steps: StepRecord[] | null;
  /** @default 1 */
  attempt?: number;
  /** Start headers handed to the workflow. @default {} */
  headers?: Record<string, string>;
}

/** The JSON text of a drive request body. */
export function driveBody(init: DriveInit): string {
  const drive: DriveRequest = {
    v: PROTOCOL_VERSION,
    runId: init.runId,
    body: init.body,
    headers: init.headers ?? {},
    steps: init.steps,
    attempt: init.attempt ?? 1,
  };
  return JSON.stringify(drive);
}

/** A drive request as the runner sends it: POST to `url`, signed over `url` with `token`. */
export async function driveRequest(url: string, token: string, init: DriveInit): Promise<Request> {
  const body = driveBody(init);
  const signature = await signRequest({ url, body, tokens: [token] });
  return new Request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signature },
    body,
  });
}

/** Reads a drive response to its end and decodes every NDJSON line; a truncated last line throws. */
export async function readOutcomes(response: Response): Promise<Outcome[]> {
  const splitter = new OutcomeLineSplitter();
  const lines: string[] = [];
  if (response.body) {
    for await (const chunk of response.body) lines.push(...splitter.push(chunk));
  }
  const rest = splitter.end();
  if (rest !== '') throw new Error(`The drive response ended in the middle of a line: ${rest}`);
  return lines.map(decodeOutcome);
}

/** A committed `run` step record (output encoded as the route encodes it, absent for `undefined`). */
export function committedStep(index: number, name: string, value?: unknown): StepRecord {
  const step: StepRecord = { index, name, kind: 'run' };
  const output = encodeValue(value, `step "${name}"`);
  if (output !== undefined) step.output = output;
  return step;
}
