import { describe, expect, it } from 'vitest';
import { childEventId, childIdempotencyKey, childRunIdOf, parentOf } from '../../api/links.js';

/** The parent/child links of `context.invoke`, read from the idempotency key and the step's event id. */
describe('invoke links', () => {
  it('reads the parent back from the key the runner gives the child', () => {
    expect(parentOf({ idempotencyKey: childIdempotencyKey('wfr_01ABC', 3) })).toEqual({
      parentRunId: 'wfr_01ABC',
      parentStepIndex: 3,
    });
  });

  it.each([null, 'order-7', 'invoke:', 'invoke:wfr_1', 'invoke:wfr_1:', 'invoke::2', 'invoke:wfr_1:x'])(
    'finds no parent for the key %s',
    (key) => {
      expect(parentOf({ idempotencyKey: key })).toBeUndefined();
    },
  );

  it('reads the child run of an invoke step only, once started', () => {
    expect(childRunIdOf({ kind: 'invoke', eventId: childEventId('wfr_CHILD') })).toBe('wfr_CHILD');
    expect(childRunIdOf({ kind: 'invoke', eventId: null })).toBeUndefined();
    expect(childRunIdOf({ kind: 'wait', eventId: childEventId('wfr_CHILD') })).toBeUndefined();
  });
});
