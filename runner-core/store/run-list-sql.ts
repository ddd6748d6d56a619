import { filterStatuses } from '../../api/run-query.js';
import type { RunQuery } from './types.js';

/**
 * The run list's one query, shared by both dialects: the filters of `RunQuery` as a WHERE clause,
 * newest first, `limit` rows. Positional parameters (`?` for SQLite, `$n` for PostgreSQL). Each
 * filter has an index (migrations/search.ts), so a query costs
 * about its page, not the table; test/runner-core/run-list-plan.test.ts checks the plans.
 *
 * Prefixes are ranges, not LIKE: SQLite's LIKE is case-insensitive and then uses no index.
 * PostgreSQL compares text by the database's collation, which need not be byte order, so there a
 * prefix is a LIKE served by a `text_pattern_ops` index.
 */
export type Dialect = 'sqlite' | 'postgres';

/** JavaScript's last date (year 275760) in epoch ms: beyond any run's creation time. */
const MAX_TIME = 8_640_000_000_000_000;

/** The smallest string greater than every string starting with `prefix` (code point order, which is UTF-8 byte order). */
export function prefixEnd(prefix: string): string {
  const points = Array.from(prefix);
  // Bounded: each turn drops one code point; a prefix of only U+10FFFF has no end (undefined below).
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1; // skip the surrogates, which are no code points
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return '';
}

/** `%`, `_` and the escape character itself, escaped for `LIKE … ESCAPE '\'`. */
function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';
}

export function runListSql(query: RunQuery, limit: number, dialect: Dialect): { text: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const p = (value: unknown): string => {
    params.push(value);
    return dialect === 'sqlite' ? '?' : `$${params.length}`;
  };
  const prefix = (column: string, value: string): void => {
    if (dialect === 'postgres') {
      where.push(`${column} LIKE ${p(likePrefix(value))}`);
      return;
    }
    const end = prefixEnd(value);
    where.push(end === '' ? `${column} >= ${p(value)}` : `${column} >= ${p(value)} AND ${column} < ${p(end)}`);
  };

  const statuses = filterStatuses(query);
  if (statuses.length === 1) where.push(`status = ${p(statuses[0])}`);
  else if (statuses.length > 1) where.push(`status IN (${statuses.map((s) => p(s)).join(', ')})`);
  if (query.url !== undefined) where.push(`url = ${p(query.url)}`);
  if (query.urlPrefix !== undefined) prefix('url', query.urlPrefix);
  if (query.idPrefix !== undefined) prefix('id', query.idPrefix);
  if (query.createdAfter !== undefined || query.createdBefore !== undefined) {
    // Both bounds always (the open one as far as times go): SQLite, without statistics, takes a
    // one-sided range for unselective and walks the whole primary key instead, which finds a
    // recent hour's few runs only after reading every older one. A range on runs_created costs
    // what it matches.
    where.push(
      `created_at >= ${p(Math.ceil(query.createdAfter ?? -MAX_TIME))} AND created_at < ${p(Math.ceil(query.createdBefore ?? MAX_TIME))}`,
    );
  }
  // The partial index steps_failed holds failed steps only, so this reads the few runs that have one.
  if (query.failedStep !== undefined)
    where.push(`id IN (SELECT run_id FROM steps WHERE status = 'failed' AND name = ${p(query.failedStep)})`);
  if (query.cursor !== undefined) where.push(`id < ${p(query.cursor)}`);
  if (where.length === 0) return { text: `SELECT * FROM runs ORDER BY id DESC LIMIT ${p(limit)}`, params };
  // The page's ids first, then their rows: when a filter is a range that must be sorted by id (a
  // URL prefix, a time range), the sort handles ids from a covering index, not whole rows.
  // PostgreSQL prices a LIMIT as if matches were spread evenly along the order, so for a range that
  // ends in the past it walks the primary key from the newest run down to it (the whole table, for
  // "an hour yesterday"). Sorting by an expression of the id (the same order) keeps it on the
  // range's own index. A range from a time to now needs no help: its runs come first on that walk.
  const order = dialect === 'postgres' && query.createdBefore !== undefined ? `id || ''` : 'id';
  const text = `SELECT * FROM runs WHERE id IN (SELECT id FROM runs WHERE ${where.join(' AND ')} ORDER BY ${order} DESC LIMIT ${p(limit)}) ORDER BY id DESC`;
  return { text, params };
}
