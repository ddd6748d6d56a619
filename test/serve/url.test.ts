import { describe, expect, it } from 'vitest';
import { WorkflowError } from '../../protocol/errors.js';
import { resolveWorkflowUrl } from '../../serve/core/url.js';

const request = (url: string): Request => new Request(url, { method: 'POST' });

describe('resolveWorkflowUrl', () => {
  it.each([
    ['the url option wins over baseUrl and the request', 'http://127.0.0.1:3000/api/workflow', 'https://public.example.com/hooks/wf', 'https://other.example.com', 'https://public.example.com/hooks/wf'],
    ['the url option is normalized', 'http://127.0.0.1:3000/x', 'https://PUBLIC.example.com', undefined, 'https://public.example.com/'],
    ['baseUrl without a trailing slash', 'http://127.0.0.1:3000/api/workflow', undefined, 'https://abc.tunnel.dev', 'https://abc.tunnel.dev/api/workflow'],
    ['baseUrl with a trailing slash', 'http://127.0.0.1:3000/api/workflow', undefined, 'https://abc.tunnel.dev/', 'https://abc.tunnel.dev/api/workflow'],
    ['baseUrl with a mount prefix', 'http://127.0.0.1:3000/workflow', undefined, 'https://example.com/app/', 'https://example.com/app/workflow'],
    ['baseUrl with a mount prefix, route at the root', 'http://127.0.0.1:3000/', undefined, 'https://example.com/app', 'https://example.com/app/'],
    ['baseUrl drops the request query string', 'http://127.0.0.1:3000/api/workflow?debug=1', undefined, 'https://abc.tunnel.dev', 'https://abc.tunnel.dev/api/workflow'],
    ['falls back to the request URL', 'http://localhost:5173/api/workflow', undefined, undefined, 'http://localhost:5173/api/workflow'],
    ['falls back to the request URL without its query string or hash', 'http://localhost:5173/api/workflow?x=1&y=2#h', undefined, undefined, 'http://localhost:5173/api/workflow'],
    ['an empty url option is ignored', 'http://localhost:5173/wf', '', undefined, 'http://localhost:5173/wf'],
  ])('%s', (_label, requestUrl, url, baseUrl, expected) => {
    expect(resolveWorkflowUrl(request(requestUrl), url, baseUrl)).toBe(expected);
  });

  it.each([
    ['baseUrl is the route', 'http://127.0.0.1:3000/api/workflow', undefined, 'https://abc.tunnel.dev/api/workflow', /`baseUrl` must not contain the route path: got "https:\/\/abc\.tunnel\.dev\/api\/workflow" for route "\/api\/workflow"; use "https:\/\/abc\.tunnel\.dev"\./],
    ['baseUrl is the route, with a trailing slash', 'http://127.0.0.1:3000/api/workflow', undefined, 'https://abc.tunnel.dev/api/workflow/', /must not contain the route path/],
    ['baseUrl ends with the route', 'http://127.0.0.1:3000/workflow', undefined, 'https://abc.tunnel.dev/api/workflow', /must not contain the route path/],
    ['a relative baseUrl', 'http://127.0.0.1:3000/wf', undefined, '/api', /Expected `baseUrl` to be an absolute http\(s\) URL, got "\/api"\./],
    ['a host-only baseUrl', 'http://127.0.0.1:3000/wf', undefined, 'abc.tunnel.dev', /Expected `baseUrl` to be an absolute http\(s\) URL/],
    ['a non-http baseUrl', 'http://127.0.0.1:3000/wf', undefined, 'ftp://abc.tunnel.dev', /Expected `baseUrl` to be an absolute http\(s\) URL, got "ftp:\/\/abc\.tunnel\.dev"\./],
    ['a relative url option', 'http://127.0.0.1:3000/wf', '/wf', undefined, /Expected `url` to be an absolute http\(s\) URL, got "\/wf"\./],
    ['a non-http url option', 'http://127.0.0.1:3000/wf', 'ws://example.com/wf', undefined, /Expected `url` to be an absolute http\(s\) URL/],
  ])('refuses %s', (_label, requestUrl, url, baseUrl, message) => {
    let thrown: unknown;
    try {
      resolveWorkflowUrl(request(requestUrl), url, baseUrl);
    } catch (error) {
      thrown = error;
    }
    expect(WorkflowError.is(thrown)).toBe(true);
    expect((thrown as WorkflowError).code).toBe('CONFIG');
    expect((thrown as WorkflowError).message).toMatch(message);
  });
});
