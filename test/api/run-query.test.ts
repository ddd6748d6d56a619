import { describe, expect, it } from 'vitest';
import {
  isEmptyRunFilter,
  matchesRunFilter,
  parseRunFilterParams,
  parseTimeText,
  runQueryParams,
} from '../../api/run-query.js';
import { prefixEnd } from '../../runner-core/store/run-list-sql.js';

/** The run list's query-string contract (api/run-query.ts): written by the Client, read by the runner. */
describe('run list query', () => {
  it('round-trips every filter through the query string', () => {
    const filter = {
      status: ['failed', 'cancelled'] as const,
      url: 'https://a/x',
      urlPrefix: 'https://a/',
      createdAfter: 1,
      createdBefore: 1_700_000_000_000,
      failedStep: 'charge',
      idPrefix: 'wfr_01',
    };
    const params = runQueryParams({ ...filter, status: [...filter.status], cursor: 'wfr_9', limit: 5 });
    expect(params.toString()).toContain('status=failed%2Ccancelled');
    expect(parseRunFilterParams(params)).toEqual({ ...filter, status: ['failed', 'cancelled'] });
    expect(parseRunFilterParams(runQueryParams({ status: 'queued' }))).toEqual({ status: 'queued' });
    expect(runQueryParams({ url: '', idPrefix: '' }).size).toBe(0);
  });

  it('reads times as epoch ms or ISO 8601 only', () => {
    expect(parseTimeText('1700000000000')).toBe(1_700_000_000_000);
    expect(parseTimeText('2026-01-31')).toBe(Date.parse('2026-01-31'));
    expect(parseTimeText('2026-01-31T12:00:00.5+02:00')).toBe(Date.parse('2026-01-31T12:00:00.5+02:00'));
    for (const bad of ['', 'now', 'March 7', '1e3', '-5', '2026-02-30T25:00', '12345678901234567'])
      expect(parseTimeText(bad), bad).toBeUndefined();
  });

  it('refuses bad parameters with what was expected and what came', () => {
    const parse = (query: string) => () => parseRunFilterParams(new URLSearchParams(query));
    expect(parse('status=failed,bogus')).toThrow(
      'Expected the query parameter `status` to be one or more of queued, running, sleeping, waiting, completed, failed, cancelled (comma-separated), got "bogus".',
    );
    expect(parse('createdBefore=tomorrow')).toThrow(
      /^Expected the query parameter `createdBefore` to be a time as epoch milliseconds or an ISO 8601 date like 2026-01-31T12:00:00Z, got "tomorrow"\.$/,
    );
    expect(parse('failedStep=a&failedStep=b')).toThrow(
      'Expected the query parameter `failedStep` at most once, got it 2 times.',
    );
  });

  it('matches a run as the store does, and says when it cannot tell', () => {
    const run = { id: 'wfr_01ABC', url: 'https://a/x', status: 'failed' as const, createdAt: 100 };
    expect(matchesRunFilter(run, {})).toBe(true);
    expect(
      matchesRunFilter(run, {
        status: ['completed', 'failed'],
        urlPrefix: 'https://a/',
        idPrefix: 'wfr_01',
        createdAfter: 100,
        createdBefore: 101,
      }),
    ).toBe(true);
    expect(matchesRunFilter(run, { createdBefore: 100 })).toBe(false);
    expect(matchesRunFilter(run, { url: 'https://a/' })).toBe(false);
    expect(matchesRunFilter(run, { failedStep: 'charge' })).toBeUndefined();
    expect(matchesRunFilter(run, { failedStep: 'charge', status: 'completed' })).toBe(false);
    expect(isEmptyRunFilter({})).toBe(true);
    expect(isEmptyRunFilter({ status: [] })).toBe(true);
    expect(isEmptyRunFilter({ failedStep: 'x' })).toBe(false);
  });

  it('bounds a prefix range by the next code point (UTF-8 order), surrogates and the last code point included', () => {
    expect(prefixEnd('wfr_01')).toBe('wfr_02');
    expect(prefixEnd('a\u{d7ff}')).toBe('a\u{e000}');
    expect(prefixEnd('a\u{ffff}')).toBe('a\u{10000}');
    expect(prefixEnd('a\u{10ffff}')).toBe('b');
    expect(prefixEnd('\u{10ffff}')).toBe('');
  });
});
