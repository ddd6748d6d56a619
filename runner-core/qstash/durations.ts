import { displayName, UpstashHeader } from './headers.js';

/**
 * The time values QStash's headers carry: durations (`Upstash-Delay: 10s`, `Upstash-Timeout: 1m30s`,
 * a bare number is seconds) and the `Upstash-Retry-Delay` expression, arithmetic over `retried`
 * (`pow(2, retried) * 1000`, in milliseconds). Both parse to a typed error naming what was expected.
 */

/** A header value the runner cannot read; the API answers 400 naming the header. */
export class QStashHeaderError extends Error {
  override name = 'QStashHeaderError';
  readonly header: string;
  constructor(header: string, message: string) {
    super(message);
    this.header = header;
  }
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest delay or timeout accepted: a year (QStash's own cap is lower per plan). */
const MAX_DURATION_MS = 365 * 86_400_000;

/** `10s`, `1h30m`, `500ms`, `2d`, or a bare number of seconds, in ms. */
export function parseDuration(header: string, value: string): number {
  const text = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1_000;
  else {
    const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) {
      throw new QStashHeaderError(
        header,
        `Expected ${header} to be a duration such as 10s, 5m, 1h30m or 2d (a bare number is seconds), got "${value}".`,
      );
    }
    ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
  }
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS)
    throw new QStashHeaderError(header, `Expected ${header} to be at most 365d, got "${value}".`);
  return Math.round(ms);
}

/** A non-negative integer header (`Upstash-Retries`, `Upstash-Not-Before`). */
export function parseCount(header: string, value: string, max: number): number {
  const text = value.trim();
  if (!/^\d+$/.test(text) || Number(text) > max)
    throw new QStashHeaderError(header, `Expected ${header} to be a whole number from 0 to ${max}, got "${value}".`);
  return Number(text);
}

// ---- Upstash-Retry-Delay: a tiny expression language, parsed once and evaluated per retry ----

type Node =
  | { n: number }
  | { v: 'retried' }
  | { op: string; a: Node; b: Node }
  | { neg: Node }
  | { fn: string; args: Node[] };

const FUNCTIONS: Record<string, { arity: number; apply: (...x: number[]) => number }> = {
  pow: { arity: 2, apply: (a, b) => a ** b },
  exp: { arity: 1, apply: Math.exp },
  sqrt: { arity: 1, apply: Math.sqrt },
  abs: { arity: 1, apply: Math.abs },
  floor: { arity: 1, apply: Math.floor },
  ceil: { arity: 1, apply: Math.ceil },
  round: { arity: 1, apply: Math.round },
  min: { arity: 2, apply: Math.min },
  max: { arity: 2, apply: Math.max },
};

/** The longest an expression may be: it is stored with every message. */
const MAX_EXPRESSION_LENGTH = 256;

/**
 * Parses `Upstash-Retry-Delay` (numbers, `retried`, + - * / ^, parentheses and pow, exp, sqrt, abs,
 * floor, ceil, round, min, max) into a function of `retried` giving milliseconds.
 */
export function parseRetryDelay(value: string): (retried: number) => number {
  const header = displayName(UpstashHeader.RetryDelay);
  const fail = (what: string): never => {
    throw new QStashHeaderError(
      header,
      `Expected ${header} to be an expression of "retried" in milliseconds (e.g. "pow(2, retried) * 1000"), got "${value}": ${what}.`,
    );
  };
  if (value.length > MAX_EXPRESSION_LENGTH) fail(`longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const tokens = value.match(/\d+(?:\.\d+)?|[A-Za-z_]+|[-+*/^(),]|\S/g) ?? [];
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const take = (expected?: string): string => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected))
      fail(`expected ${expected ?? 'more'} at token ${at}`);
    return token!;
  };
  const primary = (): Node => {
    const token = take();
    if (/^\d/.test(token)) return { n: Number(token) };
    if (token === '-') return { neg: power() };
    if (token === '(') {
      const inner = sum();
      take(')');
      return inner;
    }
    if (token === 'retried') return { v: 'retried' };
    const fn = FUNCTIONS[token];
    if (!fn) return fail(`unknown name "${token}"`);
    take('(');
    const args = [sum()];
    while (peek() === ',') {
      take(',');
      args.push(sum());
    }
    take(')');
    if (args.length !== fn.arity) fail(`${token} takes ${fn.arity} argument(s), got ${args.length}`);
    return { fn: token, args };
  };
  const power = (): Node => {
    const base = primary();
    if (peek() === '^') {
      take('^');
      return { op: '^', a: base, b: power() };
    }
    return base;
  };
  const product = (): Node => {
    let node = power();
    while (peek() === '*' || peek() === '/') node = { op: take(), a: node, b: power() };
    return node;
  };
  const sum = (): Node => {
    let node = product();
    while (peek() === '+' || peek() === '-') node = { op: take(), a: node, b: product() };
    return node;
  };
  const tree = sum();
  if (at !== tokens.length) fail(`unexpected "${tokens[at]}"`);
  const evaluate = (node: Node, retried: number): number => {
    if ('n' in node) return node.n;
    if ('v' in node) return retried;
    if ('neg' in node) return -evaluate(node.neg, retried);
    if ('fn' in node) return FUNCTIONS[node.fn]!.apply(...node.args.map((arg) => evaluate(arg, retried)));
    const a = evaluate(node.a, retried);
    const b = evaluate(node.b, retried);
    return node.op === '+'
      ? a + b
      : node.op === '-'
        ? a - b
        : node.op === '*'
          ? a * b
          : node.op === '/'
            ? a / b
            : a ** b;
  };
  return (retried) => {
    const ms = evaluate(tree, retried);
    // A NaN or negative result retries at once; an infinite one waits the longest delay.
    return Number.isFinite(ms)
      ? Math.round(Math.min(Math.max(0, ms), MAX_DURATION_MS))
      : Number.isNaN(ms)
        ? 0
        : MAX_DURATION_MS;
  };
}

/**
 * QStash's default backoff when a message names no `Upstash-Retry-Delay`: e^(2.5·retried) seconds
 * (12 s, 2.5 min, 30 min…), capped at a day.
 */
export function defaultRetryDelayMs(retried: number): number {
  return Math.round(Math.min(86_400, Math.exp(2.5 * retried)) * 1_000);
}
