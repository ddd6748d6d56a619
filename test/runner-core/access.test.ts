import { describe, expect, it } from 'vitest';
import { createAccess, type RouteAccess } from '../../runner-core/api/access.js';

/** Who may call a route of each access level without the token (the API's own tests cover the routes). */
describe('route access levels', () => {
  const local = new Headers({ host: '127.0.0.1:7766' });
  const page = new Headers({ host: '127.0.0.1:7766', origin: 'http://127.0.0.1:7766' });
  const rebinding = new Headers({ host: 'evil.example:7766', origin: 'http://evil.example:7766' });

  it.each<[RouteAccess, boolean, boolean, boolean]>([
    // level, a loopback request, the dashboard page's own request, a DNS-rebinding page
    ['public', true, true, true],
    ['read', true, true, false],
    ['dashboard-write', false, true, false],
    ['token', false, false, false],
  ])(
    '%s on wf dev (loopback reads open): local %s, page %s, rebinding %s',
    (level, fromLocal, fromPage, fromRebinding) => {
      const access = createAccess({ host: '127.0.0.1', openOnLoopback: true });
      expect([access.open(level, local), access.open(level, page), access.open(level, rebinding)]).toEqual([
        fromLocal,
        fromPage,
        fromRebinding,
      ]);
    },
  );

  it.each<RouteAccess>(['read', 'dashboard-write', 'token'])(
    '%s always wants the token where reads are not open',
    (level) => {
      for (const options of [
        { host: '127.0.0.1', openOnLoopback: false },
        { host: '0.0.0.0', openOnLoopback: true },
      ]) {
        expect(createAccess(options).open(level, page)).toBe(false);
      }
      expect(createAccess({ host: '0.0.0.0', openOnLoopback: false }).open('public', page)).toBe(true);
    },
  );
});
