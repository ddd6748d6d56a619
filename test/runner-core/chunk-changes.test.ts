import { describe, expect, it } from 'vitest';
import { ChunkChanges } from '../../runner-core/drive/chunk-changes.js';
import type { Change } from '../../runner-core/store/types.js';
import { started, succeeded } from './store-fixtures.js';

const R = 'wfr_1';
const group = (change: Change, g: number): Change => ({ ...change, group: g }) as Change;

describe('ChunkChanges', () => {
  it("folds a step's start into its success when both came in the chunk, keeping its group", () => {
    const list = new ChunkChanges()
      .add(group(started(R, 0, 10), 4))
      .add(succeeded(R, 0, '"a"', 10))
      .list();
    expect(list).toEqual([{ ...succeeded(R, 0, '"a"', 10), started: { group: 4 } }]);
  });

  it('keeps a start whose result is not in the chunk, and a result whose start came earlier, as they are', () => {
    const list = new ChunkChanges()
      .add(succeeded(R, 0, '"a"', 10))
      .add(started(R, 1, 10))
      .list();
    expect(list).toEqual([succeeded(R, 0, '"a"', 10), started(R, 1, 10)]);
  });

  it('folds each step of a parallel group into its own result, whatever the order of the lines', () => {
    const list = new ChunkChanges()
      .add(started(R, 1, 10))
      .add(started(R, 2, 10))
      .add(succeeded(R, 2, '2', 10))
      .add(succeeded(R, 1, '1', 10))
      .list();
    expect(
      list.map((c) => [c.type, 'index' in c && c.index, c.type === 'step-succeeded' && c.started !== undefined]),
    ).toEqual([
      ['step-succeeded', 2, true],
      ['step-succeeded', 1, true],
    ]);
  });
});
