import { describe, expect, it } from 'vitest';
import { describeStoreInfo, formatBytes } from '../../view/store-size.js';

describe('the store line of the dashboards', () => {
  it.each([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.00 KB'],
    [12_345_678, '12.3 MB'],
    [4_200_000_000, '4.20 GB'],
    [-5, '0 B'],
  ])('formats %d bytes as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('says how long finished runs are kept, or that they are kept forever', () => {
    expect(describeStoreInfo({ sizeBytes: 2_400_000, retentionMs: 30 * 86_400_000 })).toBe(
      'database 2.40 MB · finished runs kept 30 days',
    );
    expect(describeStoreInfo({ sizeBytes: 512, retentionMs: 3_600_000 })).toBe(
      'database 512 B · finished runs kept 1 hour',
    );
    expect(describeStoreInfo({ sizeBytes: 512, retentionMs: 0 })).toBe('database 512 B · finished runs kept forever');
  });
});
