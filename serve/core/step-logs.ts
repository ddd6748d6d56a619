import { STEP_LOG_LIMITS, type LogLevel, type LogLine, type StepLogs } from '../../protocol/step-logs.js';

/**
 * Step logs on the route's side: one buffer per step execution, the console patched once per
 * process to copy what a step prints into its buffer, and the way a console call finds its step.
 *
 * Finding the step: on Node (and on Workers with nodejs_compat) an AsyncLocalStorage follows the
 * step's function through every `await`, so parallel steps keep their own lines. It is reached
 * without importing `node:*` (serve/ stays edge-safe): `globalThis.AsyncLocalStorage` (Workers) or
 * `process.getBuiltinModule('node:async_hooks')` (Node 22.3+). Where neither exists, console
 * calls made while a step's function runs synchronously still land in it (JavaScript runs one
 * thing at a time), and `context.log` always does (the session knows the step).
 *
 * Never in the way: the original console method always runs first, nothing here throws into the
 * app, and a step that prints nothing sends nothing (`toWire` is undefined).
 */

export class StepLogBuffer {
  private lines: LogLine[] = [];
  private chars = 0;
  private dropped = 0;
  private sealed = false;
  private readonly clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  /** Adds a line within the bounds; past them counts it as dropped. After `seal`, ignored. */
  add(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    if (this.sealed) return;
    const room = STEP_LOG_LIMITS.maxChars - this.chars;
    const fieldsText = fields === undefined ? undefined : safeJson(fields);
    const size = message.length + (fieldsText?.length ?? 0);
    if (this.lines.length >= STEP_LOG_LIMITS.maxLines || room <= 0) {
      this.dropped++;
      return;
    }
    const line: LogLine = { at: this.clock(), level, message };
    if (size <= room) {
      if (fieldsText !== undefined) line.fields = JSON.parse(fieldsText) as Record<string, unknown>;
    } else {
      // The line that crosses the bound is kept cut (its fields dropped), so the last words before
      // the cut are still seen; the marker says how much is missing.
      line.message = message.slice(0, room) + `… [${size - room} more characters not kept]`;
    }
    this.chars += Math.min(size, room);
    this.lines.push(line);
  }

  /** The lines for the wire, undefined when there are none; later lines (stray callbacks) are ignored. */
  seal(): StepLogs | undefined {
    this.sealed = true;
    const lines = this.lines;
    // A timer or socket the step started keeps this buffer as its async context: let go of the lines.
    this.lines = [];
    if (lines.length === 0 && this.dropped === 0) return undefined;
    return this.dropped > 0 ? { lines, dropped: this.dropped } : { lines };
  }
}

/** JSON of a value that may hold cycles, BigInts or functions; never throws. */
function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) => {
        if (typeof v === 'bigint') return `${v}n`;
        if (v instanceof Error) return { name: v.name, message: v.message };
        if (typeof v === 'object' && v !== null) {
          if (seen.has(v)) return '[Circular]';
          seen.add(v);
        }
        return v;
      }) ?? '{}'
    );
  } catch {
    return '{}';
  }
}

/** Console arguments as one line, close to what Node prints (strings as they are, the rest inspected as JSON). */
export function formatArgs(args: readonly unknown[]): string {
  return args
    .map((arg) => {
      if (typeof arg === 'string') return arg;
      if (arg instanceof Error) return arg.stack ?? `${arg.name}: ${arg.message}`;
      if (typeof arg === 'object' && arg !== null) return safeJson(arg);
      if (typeof arg === 'function') return `[Function ${arg.name || '(anonymous)'}]`;
      return String(arg);
    })
    .join(' ');
}

interface AsyncStorage<T> {
  getStore(): T | undefined;
  run<R>(store: T, fn: () => R): R;
}
type AsyncStorageClass = new <T>() => AsyncStorage<T>;

/** Shared by every copy of this module in a process (a bundle and node_modules), so the console is patched once. */
interface Capture {
  storage: AsyncStorage<StepLogBuffer> | undefined;
  /** The step whose function runs synchronously right now (the fallback without AsyncLocalStorage). */
  current: StepLogBuffer | undefined;
  /** The console methods as they were before the patch: `context.log` prints through them. */
  original: Record<LogLevel, (...args: unknown[]) => void>;
}

const CAPTURE = Symbol.for('wfkit.step-logs');

function findAsyncLocalStorage(): AsyncStorageClass | undefined {
  const g = globalThis as {
    AsyncLocalStorage?: AsyncStorageClass;
    process?: { getBuiltinModule?: (id: string) => unknown };
  };
  if (typeof g.AsyncLocalStorage === 'function') return g.AsyncLocalStorage;
  try {
    const hooks = g.process?.getBuiltinModule?.('node:async_hooks') as
      | { AsyncLocalStorage?: AsyncStorageClass }
      | undefined;
    return typeof hooks?.AsyncLocalStorage === 'function' ? hooks.AsyncLocalStorage : undefined;
  } catch {
    return undefined;
  }
}

/** Patches the console once (lazily, at the first step a route executes) and returns the shared state. */
function capture(): Capture {
  const g = globalThis as { [CAPTURE]?: Capture };
  const existing = g[CAPTURE];
  if (existing) return existing;
  const Storage = findAsyncLocalStorage();
  const original = {} as Capture['original'];
  const state: Capture = { storage: Storage ? new Storage<StepLogBuffer>() : undefined, current: undefined, original };
  g[CAPTURE] = state;
  const target = console as unknown as Record<LogLevel, (...args: unknown[]) => void>;
  for (const level of ['debug', 'info', 'log', 'warn', 'error'] as const) {
    const method = target[level];
    if (typeof method !== 'function') {
      original[level] = () => {};
      continue;
    }
    const bound = method.bind(console);
    original[level] = bound;
    try {
      target[level] = function wfkitCapturedConsole(...args: unknown[]): void {
        bound(...args);
        const buffer = state.current ?? state.storage?.getStore();
        if (!buffer) return;
        try {
          buffer.add(level, formatArgs(args));
        } catch {} // printing must never fail the step
      };
    } catch {} // a frozen console: capture stays off, context.log still works
  }
  return state;
}

/**
 * Runs a step's function with its buffer as the current one: synchronously for the fallback, and
 * through every `await` where AsyncLocalStorage exists.
 */
export function runWithStepLogs<T>(buffer: StepLogBuffer, fn: () => T): T {
  const state = capture();
  const previous = state.current;
  state.current = buffer;
  try {
    return state.storage ? state.storage.run(buffer, fn) : fn();
  } finally {
    state.current = previous;
  }
}

/** Whether console lines follow a step through `await`s here (an AsyncLocalStorage was found). */
export function followsAwaits(): boolean {
  return capture().storage !== undefined;
}

/** The buffer of the step running here (through awaits where possible), if any. */
export function currentStepLogs(): StepLogBuffer | undefined {
  const state = capture();
  return state.current ?? state.storage?.getStore();
}

/** Prints through the console as it was before the patch, so `context.log` is not captured twice. */
export function printOriginal(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  try {
    const print = capture().original[level];
    if (fields === undefined) print(message);
    else print(message, fields);
  } catch {}
}
