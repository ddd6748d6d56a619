import { describe, expect, it } from 'vitest';
import { BATCH_TARGET_MS, nextBatchSize } from '../../runner-core/retention/prune.js';

describe('the prune batch size', () => {
  it.each([
    // [size, took ms, next]: halved when over the target, doubled when well under, kept between.
    [200, BATCH_TARGET_MS * 4, 100],
    [50, BATCH_TARGET_MS + 1, 25],
    [12, 1_000, 10],
    [50, BATCH_TARGET_MS * 0.75, 50],
    [50, 1, 100],
    [400, 0.5, 500],
  ])('after %d runs in %d ms: %d', (size, took, next) => {
    expect(nextBatchSize(size, took)).toBe(next);
  });
});
