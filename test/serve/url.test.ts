import { describe, expect, it } from 'vitest';
import { WorkflowError } from '../../protocol/errors.js';
import { resolveWorkflowUrl, type UrlEnv, type UrlOptions } from '../../serve/core/url.js';

const request = (url: string, headers: Record<string, string> = {}): Request =>
  new Request(url, { method: 'POST', headers });

const TUNNEL = 'https://abc.tunnel.dev';
const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example.com' };
const DEV: UrlEnv = { ENVIRONMENT: 'development' };
/** The forwarded hosts the rows below trust. */
const PROXIED: UrlOptions = {
  trustForwardedHeaders: true,
  allowedHosts: ['app.example.com', 'app.example.com:8443', '*.example.com', 'abc.loca.lt'],
};

interface Row {
  request: string;
  headers?: Record<string, string>;
  options?: UrlOptions;
  env?: UrlEnv;
  expected: string;
}

describe('resolveWorkflowUrl: url > baseUrl > WF_WORKFLOW_URL > the platform > forwarded headers (opt-in) > the request', () => {
  const rows: Record<string, Row> = {
    'the url option wins over everything': {
      request: 'http://127.0.0.1:3000/api/workflow',
      headers: FORWARDED,
      options: {
        url: 'https://public.example.com/hooks/wf',
        baseUrl: 'https://other.example.com',
        trustForwardedHeaders: true,
      },
      env: { WF_WORKFLOW_URL: TUNNEL },
      expected: 'https://public.example.com/hooks/wf',
    },
    'the url option is normalized': {
      request: 'http://127.0.0.1:3000/x',
      options: { url: 'https://PUBLIC.example.com' },
      expected: 'https://public.example.com/',
    },
    'an empty url option is ignored': {
      request: 'http://localhost:5173/wf',
      options: { url: '' },
      env: DEV,
      expected: 'http://localhost:5173/wf',
    },
    'baseUrl wins over WF_WORKFLOW_URL': {
      request: 'http://127.0.0.1:3000/api/workflow',
      options: { baseUrl: 'http://localhost:3000' },
      env: { WF_WORKFLOW_URL: TUNNEL },
      expected: 'http://localhost:3000/api/workflow',
    },
    'baseUrl without a trailing slash': {
      request: 'http://127.0.0.1:3000/api/workflow',
      options: { baseUrl: TUNNEL },
      expected: 'https://abc.tunnel.dev/api/workflow',
    },
    'baseUrl with a trailing slash': {
      request: 'http://127.0.0.1:3000/api/workflow',
      options: { baseUrl: `${TUNNEL}/` },
      expected: 'https://abc.tunnel.dev/api/workflow',
    },
    'baseUrl with a mount prefix': {
      request: 'http://127.0.0.1:3000/workflow',
      options: { baseUrl: 'https://example.com/app/' },
      expected: 'https://example.com/app/workflow',
    },
    'baseUrl with a mount prefix, route at the root': {
      request: 'http://127.0.0.1:3000/',
      options: { baseUrl: 'https://example.com/app' },
      expected: 'https://example.com/app/',
    },
    'baseUrl drops the request query string': {
      request: 'http://127.0.0.1:3000/api/workflow?debug=1',
      options: { baseUrl: TUNNEL },
      expected: 'https://abc.tunnel.dev/api/workflow',
    },
    'baseUrl wins over forwarded headers': {
      request: 'http://127.0.0.1:3000/wf',
      headers: FORWARDED,
      options: { baseUrl: TUNNEL, trustForwardedHeaders: true },
      expected: 'https://abc.tunnel.dev/wf',
    },
    'an empty baseUrl falls through to WF_WORKFLOW_URL': {
      request: 'http://127.0.0.1:3000/wf',
      options: { baseUrl: '' },
      env: { WF_WORKFLOW_URL: TUNNEL },
      expected: 'https://abc.tunnel.dev/wf',
    },
    'WF_WORKFLOW_URL when no option names the URL': {
      request: 'http://127.0.0.1:3000/api/workflow',
      env: { WF_WORKFLOW_URL: `${TUNNEL}/` },
      expected: 'https://abc.tunnel.dev/api/workflow',
    },
    'WF_WORKFLOW_URL with a tunnel path prefix': {
      request: 'http://localhost/workflow',
      env: { WF_WORKFLOW_URL: 'http://127.0.0.1:4000/t/abcd' },
      expected: 'http://127.0.0.1:4000/t/abcd/workflow',
    },
    'WF_WORKFLOW_URL wins over SERVICE_WORKFLOW_URL': {
      request: 'http://127.0.0.1:3000/wf',
      env: { WF_WORKFLOW_URL: TUNNEL, SERVICE_WORKFLOW_URL: 'https://other.dev' },
      expected: 'https://abc.tunnel.dev/wf',
    },
    'SERVICE_WORKFLOW_URL alone': {
      request: 'http://127.0.0.1:3000/wf',
      env: { SERVICE_WORKFLOW_URL: 'https://other.dev' },
      expected: 'https://other.dev/wf',
    },
    'WF_WORKFLOW_URL wins over forwarded headers': {
      request: 'http://127.0.0.1:3000/wf',
      headers: FORWARDED,
      options: { trustForwardedHeaders: true },
      env: { WF_WORKFLOW_URL: TUNNEL },
      expected: 'https://abc.tunnel.dev/wf',
    },
    'forwarded headers are ignored unless the app opts in': {
      request: 'http://127.0.0.1:3000/wf',
      headers: FORWARDED,
      options: { allowedHosts: PROXIED.allowedHosts },
      env: DEV,
      expected: 'http://127.0.0.1:3000/wf',
    },
    'forwarded proto and host when trusted': {
      request: 'http://127.0.0.1:3000/wf?x=1',
      headers: FORWARDED,
      options: PROXIED,
      expected: 'https://app.example.com/wf',
    },
    'forwarded: the first value of a list': {
      request: 'http://127.0.0.1:3000/wf',
      headers: { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'edge.example.com, inner.local' },
      options: PROXIED,
      expected: 'https://edge.example.com/wf',
    },
    'forwarded: a host with a port': {
      request: 'http://127.0.0.1:3000/wf',
      headers: { 'x-forwarded-host': 'app.example.com:8443', 'x-forwarded-proto': 'https' },
      options: PROXIED,
      expected: 'https://app.example.com:8443/wf',
    },
    'forwarded: proto alone keeps the request host': {
      request: 'http://app.internal:3000/wf',
      headers: { 'x-forwarded-proto': 'https' },
      options: { trustForwardedHeaders: true, allowedHosts: ['app.internal:3000'] },
      expected: 'https://app.internal:3000/wf',
    },
    'forwarded: host alone keeps the request scheme': {
      request: 'http://127.0.0.1:3000/wf',
      headers: { 'x-forwarded-host': 'abc.loca.lt' },
      options: PROXIED,
      expected: 'http://abc.loca.lt/wf',
    },
    'forwarded: a proto that is not http(s) is ignored': {
      request: 'http://127.0.0.1:3000/wf',
      headers: { 'x-forwarded-proto': 'wss', 'x-forwarded-host': 'app.example.com' },
      options: PROXIED,
      expected: 'http://app.example.com/wf',
    },
    'forwarded: a host that is no host is ignored': {
      request: 'http://127.0.0.1:3000/wf',
      headers: { 'x-forwarded-host': 'evil.example/path?q' },
      options: PROXIED,
      env: DEV,
      expected: 'http://127.0.0.1:3000/wf',
    },
    'trusted, but no forwarded headers: the request URL': {
      request: 'http://127.0.0.1:3000/wf',
      options: PROXIED,
      env: DEV,
      expected: 'http://127.0.0.1:3000/wf',
    },
    'falls back to the request URL': {
      request: 'http://localhost:5173/api/workflow',
      env: DEV,
      expected: 'http://localhost:5173/api/workflow',
    },
    'falls back to the request URL without its query string or hash': {
      request: 'http://localhost:5173/api/workflow?x=1&y=2#h',
      env: DEV,
      expected: 'http://localhost:5173/api/workflow',
    },

    // The request's own host, in any mode: the runner's allowed origins are the lock (403 there).
    'production: the request URL when nothing names one': {
      request: 'https://app.example.com/api/workflow',
      env: { ENVIRONMENT: 'production', NODE_ENV: 'production' },
      expected: 'https://app.example.com/api/workflow',
    },
    'production: a loopback request URL': {
      request: 'http://127.0.0.1:3000/wf',
      env: { ENVIRONMENT: 'production', NODE_ENV: 'test' },
      expected: 'http://127.0.0.1:3000/wf',
    },
    'production: any Host names the URL when no allowedHosts are set (the runner refuses origins it was not given)': {
      request: 'http://attacker.example:8080/wf',
      expected: 'http://attacker.example:8080/wf',
    },
    'production: a trusted forwarded host when no allowedHosts are set': {
      request: 'http://10.0.0.5:3000/wf',
      headers: FORWARDED,
      options: { trustForwardedHeaders: true },
      expected: 'https://app.example.com/wf',
    },
    // The platform's own statement of the deployment's origin (table in platform-url.test.ts).
    'the platform: VERCEL_URL + the request path': {
      request: 'https://www.example.com/api/workflow?x=1',
      env: { VERCEL_URL: 'my-app-abc123.vercel.app' },
      expected: 'https://my-app-abc123.vercel.app/api/workflow',
    },
    'the platform wins over a forged Host': {
      request: 'http://attacker.example/wf',
      env: { RENDER_EXTERNAL_URL: 'https://my-app.onrender.com' },
      expected: 'https://my-app.onrender.com/wf',
    },
    'the platform wins over forwarded headers': {
      request: 'http://10.0.0.5:3000/wf',
      headers: FORWARDED,
      options: { trustForwardedHeaders: true },
      env: { FLY_APP_NAME: 'my-app' },
      expected: 'https://my-app.fly.dev/wf',
    },
    'the platform is not checked against allowedHosts (the operator stated it)': {
      request: 'http://attacker.example/wf',
      options: { allowedHosts: ['app.example.com'] },
      env: { RAILWAY_PUBLIC_DOMAIN: 'my-app.up.railway.app' },
      expected: 'https://my-app.up.railway.app/wf',
    },
    'WF_WORKFLOW_URL wins over the platform': {
      request: 'https://x.vercel.app/wf',
      env: { WF_WORKFLOW_URL: 'https://app.example.com', VERCEL_URL: 'x.vercel.app' },
      expected: 'https://app.example.com/wf',
    },
    'baseUrl wins over the platform': {
      request: 'http://localhost:3000/wf',
      options: { baseUrl: 'http://localhost:3000' },
      env: { VERCEL_URL: 'x.vercel.app' },
      expected: 'http://localhost:3000/wf',
    },
    // With allowedHosts set (the app's optional second lock): only an allowed one, or a loopback one in development.
    'an allowed host': {
      request: 'https://app.example.com/wf',
      options: { allowedHosts: ['app.example.com'] },
      expected: 'https://app.example.com/wf',
    },
    'an allowed host is matched without case': {
      request: 'https://APP.example.com/wf',
      options: { allowedHosts: ['App.Example.com'] },
      expected: 'https://app.example.com/wf',
    },
    'an allowed host with its port': {
      request: 'http://app.example.com:8080/wf',
      options: { allowedHosts: ['app.example.com:8080'] },
      expected: 'http://app.example.com:8080/wf',
    },
    'an allowed host, the default port spelled out': {
      request: 'https://app.example.com:443/wf',
      options: { allowedHosts: ['app.example.com'] },
      expected: 'https://app.example.com/wf',
    },
    'a wildcard: any subdomain': {
      request: 'https://pr-12.preview.example.com/wf',
      options: { allowedHosts: ['*.example.com'] },
      expected: 'https://pr-12.preview.example.com/wf',
    },
    'WF_ALLOWED_HOSTS, comma separated': {
      request: 'https://b.example.org/wf',
      env: { WF_ALLOWED_HOSTS: 'a.example.org, b.example.org,' },
      expected: 'https://b.example.org/wf',
    },
    'WF_ALLOWED_HOSTS adds to allowedHosts': {
      request: 'https://b.example.org/wf',
      options: { allowedHosts: ['a.example.org'] },
      env: { WF_ALLOWED_HOSTS: 'b.example.org' },
      expected: 'https://b.example.org/wf',
    },
    'an allowed IPv6 host': {
      request: 'http://[fd00::1]:3000/wf',
      options: { allowedHosts: ['[fd00::1]:3000'] },
      expected: 'http://[fd00::1]:3000/wf',
    },
    'development: 127.0.0.0/8': { request: 'http://127.0.0.5:3000/wf', env: DEV, expected: 'http://127.0.0.5:3000/wf' },
    'development: [::1]': { request: 'http://[::1]:3000/wf', env: DEV, expected: 'http://[::1]:3000/wf' },
    'development from NODE_ENV': {
      request: 'http://localhost:3000/wf',
      env: { NODE_ENV: 'development' },
      expected: 'http://localhost:3000/wf',
    },
  };

  it.each(Object.entries(rows))('%s', (_label, row) => {
    expect(resolveWorkflowUrl(request(row.request, row.headers), row.options, row.env)).toBe(row.expected);
  });

  const refusals: Record<string, [Row, RegExp]> = {
    'baseUrl is the route': [
      { request: 'http://127.0.0.1:3000/api/workflow', options: { baseUrl: `${TUNNEL}/api/workflow` }, expected: '' },
      /`baseUrl` must not contain the route path: got "https:\/\/abc\.tunnel\.dev\/api\/workflow" for route "\/api\/workflow"; use "https:\/\/abc\.tunnel\.dev"\./,
    ],
    'baseUrl is the route, with a trailing slash': [
      { request: 'http://127.0.0.1:3000/api/workflow', options: { baseUrl: `${TUNNEL}/api/workflow/` }, expected: '' },
      /must not contain the route path/,
    ],
    'baseUrl ends with the route': [
      { request: 'http://127.0.0.1:3000/workflow', options: { baseUrl: `${TUNNEL}/api/workflow` }, expected: '' },
      /must not contain the route path/,
    ],
    'WF_WORKFLOW_URL is the route': [
      { request: 'http://127.0.0.1:3000/workflow', env: { WF_WORKFLOW_URL: `${TUNNEL}/workflow` }, expected: '' },
      /`WF_WORKFLOW_URL` must not contain the route path: got "https:\/\/abc\.tunnel\.dev\/workflow"/,
    ],
    'a relative baseUrl': [
      { request: 'http://127.0.0.1:3000/wf', options: { baseUrl: '/api' }, expected: '' },
      /Expected `baseUrl` to be an absolute http\(s\) URL, got "\/api"\./,
    ],
    'a host-only baseUrl': [
      { request: 'http://127.0.0.1:3000/wf', options: { baseUrl: 'abc.tunnel.dev' }, expected: '' },
      /Expected `baseUrl` to be an absolute http\(s\) URL/,
    ],
    'a non-http baseUrl': [
      { request: 'http://127.0.0.1:3000/wf', options: { baseUrl: 'ftp://abc.tunnel.dev' }, expected: '' },
      /Expected `baseUrl` to be an absolute http\(s\) URL, got "ftp:\/\/abc\.tunnel\.dev"\./,
    ],
    'a host-only WF_WORKFLOW_URL': [
      { request: 'http://127.0.0.1:3000/wf', env: { WF_WORKFLOW_URL: 'abc.loca.lt' }, expected: '' },
      /Expected `WF_WORKFLOW_URL` to be an absolute http\(s\) URL, got "abc\.loca\.lt"\./,
    ],
    'a relative url option': [
      { request: 'http://127.0.0.1:3000/wf', options: { url: '/wf' }, expected: '' },
      /Expected `url` to be an absolute http\(s\) URL, got "\/wf"\./,
    ],
    'a non-http url option': [
      { request: 'http://127.0.0.1:3000/wf', options: { url: 'ws://example.com/wf' }, expected: '' },
      /Expected `url` to be an absolute http\(s\) URL/,
    ],
    // The app's optional second lock: with allowedHosts set, a host it does not list is refused (403).
    'a forged Host in development, hosts listed': [
      {
        request: 'http://attacker.example:8080/wf',
        options: { allowedHosts: ['app.example.com'] },
        env: DEV,
        expected: '',
      },
      /request's Host header only for the hosts in WF_ALLOWED_HOSTS.*"attacker\.example:8080" is not one of them.*WF_WORKFLOW_URL=https:\/\/your-app\.example\.com/,
    ],
    'a host that is not in allowedHosts': [
      { request: 'https://evil.example/wf', options: { allowedHosts: ['app.example.com'] }, expected: '' },
      /is not one of them/,
    ],
    'a host that is not in WF_ALLOWED_HOSTS': [
      { request: 'https://evil.example/wf', env: { WF_ALLOWED_HOSTS: 'app.example.com' }, expected: '' },
      /is not one of them/,
    ],
    'another port of an allowed host': [
      { request: 'http://app.example.com:6379/wf', options: { allowedHosts: ['app.example.com'] }, expected: '' },
      /is not one of them/,
    ],
    'a wildcard does not match the bare name': [
      { request: 'https://example.com/wf', options: { allowedHosts: ['*.example.com'] }, expected: '' },
      /is not one of them/,
    ],
    'a wildcard does not match a suffix that is no subdomain': [
      { request: 'https://evilexample.com/wf', options: { allowedHosts: ['*.example.com'] }, expected: '' },
      /is not one of them/,
    ],
    'a trusted forwarded host that is not allowed': [
      {
        request: 'http://127.0.0.1:3000/wf',
        headers: { 'x-forwarded-host': 'attacker.example' },
        options: { trustForwardedHeaders: true, allowedHosts: ['app.example.com'] },
        env: DEV,
        expected: '',
      },
      /request's X-Forwarded-Host header only.*"attacker\.example" is not one of them/,
    ],
    'a malformed allowedHosts entry': [
      { request: 'https://app.example.com/wf', options: { allowedHosts: ['https://app.example.com'] }, expected: '' },
      /Expected each entry of `allowedHosts` to be a host like app\.example\.com.*got "https:\/\/app\.example\.com"/,
    ],
    'a malformed WF_ALLOWED_HOSTS entry': [
      { request: 'https://app.example.com/wf', env: { WF_ALLOWED_HOSTS: 'app.example.com/wf' }, expected: '' },
      /Expected each entry of `WF_ALLOWED_HOSTS`/,
    ],
  };

  it.each(Object.entries(refusals))('refuses %s', (_label, [row, message]) => {
    let thrown: unknown;
    try {
      resolveWorkflowUrl(request(row.request, row.headers), row.options, row.env);
    } catch (error) {
      thrown = error;
    }
    expect(WorkflowError.is(thrown)).toBe(true);
    expect((thrown as WorkflowError).code).toBe(
      /is not one of them/.test(message.source) ? 'HOST_NOT_ALLOWED' : 'CONFIG',
    );
    expect((thrown as WorkflowError).message).toMatch(message);
  });
});
