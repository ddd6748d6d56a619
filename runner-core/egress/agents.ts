import { Agent } from './undici-parts.js';
import type { OriginPattern } from './origins.js';
import { callConnector } from './connect.js';

/** How long the runner waits for a drive answer's headers (the route sends them before its first step). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
/** Longest silence between two outcome lines of a drive: the longest single step. */
export const DEFAULT_BODY_TIMEOUT_MS = 15 * 60_000;
/** Time to open a connection (TCP, TLS) to any destination. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** How the runner's requests wait for answers (`RunnerOptions.dispatch`); here beside their defaults. */
export interface DispatchOptions {
  /** Time to the response headers; the route sends them before the first step runs. @default 30s */
  headersTimeoutMs?: number;
  /** Longest silence between two outcome lines, i.e. the longest single step. @default 15 min */
  bodyTimeoutMs?: number;
  /** Connections kept per origin. @default 256 */
  connections?: number;
}

/** The gate's two connection pools; nothing outside runner-core/egress/ creates one. */
export interface EgressAgents {
  /** Destinations judged by their URL (allowed origins, operator-set): the apps, the alert webhook. */
  apps: Agent;
  /** Call targets chosen by workflow code: each connection's address is checked (connect.ts). */
  calls: Agent;
}

/**
 * The undici agents every outbound request goes through: a keep-alive pool per origin, no
 * redirects followed (undici's `request` follows none unless asked, and the gate never asks).
 * Calls get their own agent so a call target never shares a connection made without the
 * address check, and the apps' agent keeps the drive path exactly as cheap as before.
 */
export function createAgents(
  options: DispatchOptions,
  allowed: readonly OriginPattern[],
  connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
): EgressAgents {
  const common = {
    headersTimeout: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    bodyTimeout: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    connections: options.connections ?? 256,
    keepAliveTimeout: 4_000,
    pipelining: 1,
  };
  return {
    apps: new Agent({ ...common, connect: { timeout: connectTimeoutMs } }),
    calls: new Agent({ ...common, connect: callConnector(allowed, connectTimeoutMs) }),
  };
}
