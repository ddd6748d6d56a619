import { describe, expect, it } from 'vitest';
import { parseByteSize } from '../../cli/lib/runner-flags.js';
import { HANDOVER_CALL_TYPE } from '../../runner-core/qstash/publish/handover.js';
import { checkPlanLimits, PlanLimitError, upstashLimits } from '../../runner-core/qstash/publish/limits.js';
import { parseMessage } from '../../runner-core/qstash/messages/spec.js';
import type { RunMessage, StoredMessage } from '../../runner-core/qstash/messages/store.js';
import {
  NON_WORKFLOW_DESTINATION_MESSAGE,
  nonWorkflowDestination,
  TRIGGER_NEEDS_SDK_V1_MESSAGE,
} from '../../runner-core/qstash/delivery/non-workflow.js';
import { inlineListBody, listStream } from '../../runner-core/qstash/delivery/run-list.js';
import { dueAt } from '../../runner-core/qstash/publish/wake-time.js';

/** The pure parts of QStash fidelity: plan limits, a run's list as the SDK reads it, wake times, non-workflow answers. */

const URL_ = 'http://127.0.0.1:3000/wf';

describe('plan limits', () => {
  const limits = upstashLimits({ maxRetries: 5 });

  it('refuses a message, or its callback, asking for more retries than the limit, with 412', () => {
    expect(() => checkPlanLimits(limits, [parseMessage(URL_, { 'Upstash-Retries': '5' }, '')])).not.toThrow();
    const over = () => checkPlanLimits(limits, [parseMessage(URL_, { 'Upstash-Retries': '6' }, '')]);
    expect(over).toThrow(PlanLimitError);
    expect(over).toThrow(/Upstash-Retries 6 is over this runner's limit of 5/);
    const callback = () =>
      checkPlanLimits(limits, [
        parseMessage(URL_, { 'Upstash-Callback': URL_, 'Upstash-Callback-Retries': '1000000' }, ''),
      ]);
    expect(callback).toThrow(expect.objectContaining({ status: 412 }));
  });

  it('reads any well-formed retry count (the limit is checked apart), and refuses a malformed one', () => {
    expect(parseMessage(URL_, { 'Upstash-Retries': '1000000' }, '').retries).toBe(1_000_000);
    expect(() => parseMessage(URL_, { 'Upstash-Retries': '1e6' }, '')).toThrow(/Upstash-Retries/);
  });

  it('checks the configured limits and the size flag', () => {
    expect(upstashLimits()).toEqual({ maxRetries: 100, maxMessageBytes: 10 * 1024 * 1024 });
    expect(() => upstashLimits({ maxRetries: -1 })).toThrow(RangeError);
    expect(() => upstashLimits({ maxMessageBytes: 10 })).toThrow(RangeError);
    expect(parseByteSize('10mb')).toBe(10 * 1024 * 1024);
    expect(parseByteSize('512KB')).toBe(512 * 1024);
    expect(parseByteSize('2048')).toBe(2048);
    expect(() => parseByteSize('12')).toThrow(/at least 1kb/);
    expect(() => parseByteSize('lots')).toThrow(/size like 10mb/);
  });
});

describe("a run's list", () => {
  const message = (id: string, body: string, callType: string | null = 'step'): RunMessage => ({
    id,
    seq: 0,
    callType,
    body,
    status: 'pending',
    retried: 0,
    createdAt: 0,
  });
  const list = [
    message('msg_1', '{"a":"ü"}'),
    message('msg_h', '{"a":"ü"}', HANDOVER_CALL_TYPE),
    message('msg_2', '{"stepId":1}'),
    message('msg_3', 'x', 'toCallback'),
  ];
  const expected = [
    { messageId: 'msg_1', body: Buffer.from('{"a":"ü"}').toString('base64'), callType: 'step' },
    { messageId: 'msg_2', body: Buffer.from('{"stepId":1}').toString('base64'), callType: 'step' },
    { messageId: 'msg_3', body: Buffer.from('x').toString('base64'), callType: 'toCallback' },
  ];

  it('is inline without the handover while it fits, and empty (lazy fetch) when it would not', () => {
    const body = inlineListBody(list, 1024);
    expect(JSON.parse(body)).toEqual(expected);
    expect(inlineListBody(list, Buffer.byteLength(body) - 1)).toBe('');
    expect(inlineListBody([message('msg_big', 'b'.repeat(10_000))], 1024)).toBe('');
  });

  it('streams the same entries', async () => {
    expect(JSON.parse(await new Response(listStream(list)).text())).toEqual(expected);
    expect(await new Response(listStream([])).text()).toBe('[]');
  });
});

describe('wake times', () => {
  const sleepUntil = (until: number, notBefore: number) =>
    parseMessage(
      URL_,
      { 'Upstash-Workflow-RunId': 'wfr_x', 'Upstash-Not-Before': String(notBefore) },
      JSON.stringify({ stepId: 2, stepName: 's', stepType: 'SleepUntil', sleepUntil: until, concurrent: 1 }),
    );

  it('a sleepUntil is due at its own instant when the rounded Not-Before is earlier, never before', () => {
    expect(dueAt(sleepUntil(1_700_000_000.49, 1_700_000_000), 0)).toBe(1_700_000_000_490);
    expect(dueAt(sleepUntil(1_700_000_000.6, 1_700_000_001), 0)).toBe(1_700_000_001_000);
  });

  it('any other message is due at Not-Before, or after its delay', () => {
    expect(dueAt(parseMessage(URL_, { 'Upstash-Delay': '2s' }, '{"sleepUntil":9999999999}'), 1_000)).toBe(3_000);
    expect(
      dueAt(
        parseMessage(
          URL_,
          { 'Upstash-Workflow-RunId': 'wfr_x', 'Upstash-Not-Before': '5' },
          '{"stepType":"Run","sleepUntil":9}',
        ),
        0,
      ),
    ).toBe(5_000);
  });
});

describe('non-workflow destinations', () => {
  const step = { kind: 'workflow' } as StoredMessage;
  const answer = (headers: Record<string, string>, status = 200) => ({ status, headers, body: Buffer.from('ok') });

  it("a run's 2xx without the SDK's protocol header fails; with it, or not 2xx, it is judged as usual", () => {
    expect(nonWorkflowDestination(step, answer({}), false)?.message).toBe(NON_WORKFLOW_DESTINATION_MESSAGE);
    expect(nonWorkflowDestination(step, answer({ 'upstash-workflow-sdk-version': '1' }), false)).toBeUndefined();
    expect(nonWorkflowDestination(step, answer({}, 500), false)).toBeUndefined();
    expect(nonWorkflowDestination({ kind: 'plain' } as StoredMessage, answer({}), false)).toBeUndefined();
  });

  it('a run started by POST /v2/trigger needs the SDK of v1 or later: the protocol header alone is not enough', () => {
    expect(nonWorkflowDestination(step, answer({ 'upstash-workflow-sdk-version': '1' }), true)?.message).toBe(
      TRIGGER_NEEDS_SDK_V1_MESSAGE,
    );
    expect(
      nonWorkflowDestination(
        step,
        answer({ 'upstash-workflow-sdk-version': '1', 'upstash-workflow-sdk': 'v0.2.7' }),
        true,
      )?.message,
    ).toBe(TRIGGER_NEEDS_SDK_V1_MESSAGE);
    expect(
      nonWorkflowDestination(
        step,
        answer({ 'upstash-workflow-sdk-version': '1', 'upstash-workflow-sdk': 'v1.3.2' }),
        true,
      ),
    ).toBeUndefined();
  });
});
