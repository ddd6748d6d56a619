import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../protocol/values.js';
import { callAnswer, displayOutput, encodedOutput, stepValue, waitTimedOut } from '../../view/step-value.js';
import { run, step } from './records.js';

describe('step values', () => {
  it('reads the encoded output of a step or a run, and shows it with its types', () => {
    const output = encodeValue(new Map([['k', 1n]]), 'test')!;
    expect(encodedOutput(step({ outputEncoded: output }))).toBe(output);
    expect(displayOutput(run({ outputEncoded: output }))).toBe('Map {\n  "k" => 1n\n}');
    expect(displayOutput(step())).toBe('undefined');
    expect(stepValue(step({ outputEncoded: 'not devalue' }))).toBeUndefined();
  });

  it("decodes a call's answer: status, headers and body", () => {
    const output = encodeValue({ status: 201, headers: { 'x-a': '1' }, body: { ok: true } }, 'test')!;
    expect(callAnswer(step({ kind: 'call', outputEncoded: output }))).toEqual({
      status: 201,
      headers: { 'x-a': '1' },
      body: '{\n  "ok": true\n}',
    });
    expect(
      callAnswer(
        step({ kind: 'call', outputEncoded: encodeValue({ status: 204, headers: {}, body: 'plain' }, 'test')! }),
      )!.body,
    ).toBe('plain');
    expect(callAnswer(step({ kind: 'call', outputEncoded: encodeValue('no answer', 'test')! }))).toBeUndefined();
    expect(callAnswer(step({ kind: 'run', outputEncoded: output }))).toBeUndefined();
  });

  it('tells a wait that timed out from one that got its event', () => {
    const timedOut = encodeValue({ timeout: true }, 'test')!;
    expect(waitTimedOut(step({ kind: 'wait', status: 'succeeded', outputEncoded: timedOut }))).toBe(true);
    expect(
      waitTimedOut(
        step({ kind: 'wait', status: 'succeeded', outputEncoded: encodeValue({ timeout: false, data: 1 }, 'test')! }),
      ),
    ).toBe(false);
    expect(waitTimedOut(step({ kind: 'wait', status: 'running', outputEncoded: timedOut }))).toBe(false);
  });
});
