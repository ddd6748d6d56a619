import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/**
 * The parts of undici the runner uses, loaded by their own modules instead of through undici's
 * index: the index loads everything undici has (fetch, WebSocket, caches, mocks, interceptors:
 * about 110 files): about 13 MB of resident memory in a bare node process, about 3 MB in `wf start`
 * (where Node's own bundled undici already holds much of what they share), none of it used. The
 * gate needs an `Agent`, a connector for the call agent's address check, the error classes and
 * `request` (the index puts it on every dispatcher's prototype; here it is called on the agent).
 * undici declares no `exports` map, so these paths are public to Node; they are not to its types,
 * hence the types taken from the index. test/egress/undici-parts.test.ts fails if a path moves or
 * stops exporting what is used here.
 */

const require = createRequire(import.meta.url);

export const Agent: typeof Undici.Agent = require('undici/lib/dispatcher/agent.js');
export type Agent = Undici.Agent;
export const buildConnector: typeof Undici.buildConnector = require('undici/lib/core/connect.js');
export const errors: typeof Undici.errors = require('undici/lib/core/errors.js');

const apiRequest: (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData> = require('undici/lib/api/api-request.js');

/**
 * `dispatcher.request(options)` without undici's index: the same function, the one the index
 * installs on `Dispatcher.prototype`.
 * @example const answer = await request(agent, { origin, path: '/', method: 'GET' });
 */
export function request(
  dispatcher: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
): Promise<Undici.Dispatcher.ResponseData> {
  return apiRequest.call(dispatcher, options);
}
