import { errors as undiciErrors } from 'undici';
import { describe, expect, it } from 'vitest';
import { EndpointError, EndpointTimeoutError } from '../../runner-core/errors.js';
import { isUnreachable } from '../../runner-core/drive/transport.js';

const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code });

describe('isUnreachable', () => {
  it.each<[string, unknown, boolean]>([
    ['connection refused', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), true],
    ['connection reset', coded('ECONNRESET'), true],
    ['DNS: no such host', coded('ENOTFOUND', 'getaddrinfo ENOTFOUND app.internal'), true],
    ['DNS: try again', coded('EAI_AGAIN'), true],
    ['no route to host', coded('EHOSTUNREACH'), true],
    ['undici: the other side closed', new undiciErrors.SocketError('other side closed'), true],
    ['undici: connect timeout', new undiciErrors.ConnectTimeoutError(), true],
    ['the drive timeout', new EndpointTimeoutError('http://127.0.0.1:3000/wf'), true],
    ['wrapped in a cause chain', new TypeError('fetch failed', { cause: coded('ECONNREFUSED') }), true],
    [
      'every address refused (happy eyeballs)',
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]),
      true,
    ],
    ['some address failed otherwise', new AggregateError([coded('ECONNREFUSED'), new Error('bad certificate')]), false],
    ['a 500 the app answered', new EndpointError(500, 'http://127.0.0.1:3000/wf', 'boom'), false],
    [
      'a protocol error in the stream',
      Object.assign(new Error('bad line'), { name: 'ProtocolError', code: 'PROTOCOL' }),
      false,
    ],
    ['a TLS certificate problem (a change to make, not an outage)', coded('CERT_HAS_EXPIRED'), false],
    ['not an error at all', 'ECONNREFUSED', false],
  ])('%s → %s', (_, error, expected) => {
    expect(isUnreachable(error)).toBe(expected);
  });

  it('looks only a few causes deep (a cycle cannot loop)', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(isUnreachable(a)).toBe(false);
  });
});
