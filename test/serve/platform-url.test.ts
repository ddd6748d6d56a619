import { describe, expect, it } from 'vitest';
import { WorkflowError } from '../../protocol/errors.js';
import { PLATFORM_URL_VARIABLES, platformOrigin } from '../../serve/core/platform-url.js';

type Env = Record<string, string | undefined>;

describe('platformOrigin: the hosting platform states the deployment origin; the per-deployment one first', () => {
  const rows: Record<string, [Env, { origin: string; source: string } | undefined]> = {
    'nowhere: no platform variable': [{ NODE_ENV: 'production', PORT: '3000' }, undefined],
    'Vercel: the deployment URL (a host, https added)': [
      { VERCEL_URL: 'my-app-abc123-team.vercel.app' },
      { origin: 'https://my-app-abc123-team.vercel.app', source: 'VERCEL_URL (Vercel)' },
    ],
    'Vercel: the deployment URL wins over the branch and production domains': [
      {
        VERCEL_ENV: 'production',
        VERCEL_PROJECT_PRODUCTION_URL: 'app.example.com',
        VERCEL_BRANCH_URL: 'my-app-git-main-team.vercel.app',
        VERCEL_URL: 'my-app-abc123-team.vercel.app',
      },
      { origin: 'https://my-app-abc123-team.vercel.app', source: 'VERCEL_URL (Vercel)' },
    ],
    'Vercel: the branch URL when the deployment URL is absent': [
      { VERCEL_BRANCH_URL: 'my-app-git-main-team.vercel.app', VERCEL_PROJECT_PRODUCTION_URL: 'app.example.com' },
      { origin: 'https://my-app-git-main-team.vercel.app', source: 'VERCEL_BRANCH_URL (Vercel)' },
    ],
    'Vercel: the production domain last': [
      { VERCEL_PROJECT_PRODUCTION_URL: 'app.example.com' },
      { origin: 'https://app.example.com', source: 'VERCEL_PROJECT_PRODUCTION_URL (Vercel)' },
    ],
    'Vercel: not under `vercel dev` (development has baseUrl)': [
      { VERCEL_ENV: 'development', VERCEL_URL: 'localhost:3000' },
      undefined,
    ],
    'Vercel: an empty deployment URL is absent': [
      { VERCEL_URL: '', VERCEL_BRANCH_URL: 'b.vercel.app' },
      { origin: 'https://b.vercel.app', source: 'VERCEL_BRANCH_URL (Vercel)' },
    ],
    'Netlify: the deploy URL wins over the main address': [
      {
        NETLIFY: 'true',
        URL: 'https://petsof.netlify.app',
        DEPLOY_URL: 'https://5b243e66dd6a547b4fee73ae--petsof.netlify.app',
      },
      { origin: 'https://5b243e66dd6a547b4fee73ae--petsof.netlify.app', source: 'DEPLOY_URL (Netlify)' },
    ],
    'Netlify functions: URL, known by SITE_ID': [
      { SITE_ID: '1d01c0c0-4554-4747-93b8-34ce3448ab95', SITE_NAME: 'petsof', URL: 'https://www.petsofnetlify.com' },
      { origin: 'https://www.petsofnetlify.com', source: 'URL (Netlify)' },
    ],
    'not Netlify: a bare URL variable is not a platform statement': [{ URL: 'https://something.example' }, undefined],
    'Render: the external URL': [
      { RENDER: 'true', RENDER_EXTERNAL_URL: 'https://my-app.onrender.com' },
      { origin: 'https://my-app.onrender.com', source: 'RENDER_EXTERNAL_URL (Render)' },
    ],
    'Railway: the public domain (a host)': [
      { RAILWAY_PUBLIC_DOMAIN: 'my-app.up.railway.app' },
      { origin: 'https://my-app.up.railway.app', source: 'RAILWAY_PUBLIC_DOMAIN (Railway)' },
    ],
    'Heroku: the default domain (dyno metadata)': [
      { HEROKU_APP_DEFAULT_DOMAIN_NAME: 'example-app-1234567890ab.herokuapp.com' },
      { origin: 'https://example-app-1234567890ab.herokuapp.com', source: 'HEROKU_APP_DEFAULT_DOMAIN_NAME (Heroku)' },
    ],
    'Fly.io: <app>.fly.dev from the app name': [
      { FLY_APP_NAME: 'my-app', FLY_REGION: 'ams' },
      { origin: 'https://my-app.fly.dev', source: 'FLY_APP_NAME (Fly.io)' },
    ],
    'a trailing slash and case are normalized': [
      { RENDER_EXTERNAL_URL: 'https://My-App.onrender.com/' },
      { origin: 'https://my-app.onrender.com', source: 'RENDER_EXTERNAL_URL (Render)' },
    ],
    'a stated http origin is kept': [
      { RENDER_EXTERNAL_URL: 'http://10.0.0.5:8080' },
      { origin: 'http://10.0.0.5:8080', source: 'RENDER_EXTERNAL_URL (Render)' },
    ],
  };

  it.each(Object.entries(rows))('%s', (_label, [env, expected]) => {
    expect(platformOrigin(env)).toEqual(expected);
  });

  const refusals: Record<string, [Env, RegExp]> = {
    'a path in the stated URL': [
      { RENDER_EXTERNAL_URL: 'https://my-app.onrender.com/api' },
      /Expected RENDER_EXTERNAL_URL \(Render\) to be a host or an http\(s\) origin, got "https:\/\/my-app\.onrender\.com\/api"; set WF_WORKFLOW_URL=/,
    ],
    'a host that is no host': [
      { VERCEL_URL: 'not a host' },
      /Expected VERCEL_URL \(Vercel\) to be a host or an http\(s\) origin, got "not a host"/,
    ],
    'credentials in the URL': [
      { RENDER_EXTERNAL_URL: 'https://user:pw@my-app.onrender.com' },
      /Expected RENDER_EXTERNAL_URL/,
    ],
  };

  it.each(Object.entries(refusals))('refuses %s with a CONFIG error naming the variable', (_label, [env, message]) => {
    let thrown: unknown;
    try {
      platformOrigin(env);
    } catch (error) {
      thrown = error;
    }
    expect(WorkflowError.is(thrown) && thrown.code).toBe('CONFIG');
    expect((thrown as Error).message).toMatch(message);
  });

  it('lists every variable it reads, for the settings resolver', () => {
    for (const name of [
      'VERCEL_URL',
      'VERCEL_BRANCH_URL',
      'VERCEL_PROJECT_PRODUCTION_URL',
      'VERCEL_ENV',
      'DEPLOY_URL',
      'URL',
      'NETLIFY',
      'SITE_ID',
      'RENDER_EXTERNAL_URL',
      'RAILWAY_PUBLIC_DOMAIN',
      'HEROKU_APP_DEFAULT_DOMAIN_NAME',
      'FLY_APP_NAME',
    ]) {
      expect(PLATFORM_URL_VARIABLES).toContain(name);
    }
  });
});
