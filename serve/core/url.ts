import { WorkflowError } from '../../protocol/errors.js';

function parseAbsolute(value: string, name: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new WorkflowError('CONFIG', `Expected \`${name}\` to be an absolute http(s) URL, got "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WorkflowError('CONFIG', `Expected \`${name}\` to be an absolute http(s) URL, got "${value}".`);
  }
  return url;
}

/**
 * The public URL the runner must call for this route: `url` > `baseUrl` (+ the request's path)
 * > the request's own URL. `baseUrl` is an origin (optionally with a mount prefix), never the route.
 */
export function resolveWorkflowUrl(request: Request, url: string | undefined, baseUrl: string | undefined): string {
  if (url) return parseAbsolute(url, 'url').href;
  const own = new URL(request.url);
  if (!baseUrl) return own.origin + own.pathname;
  const base = parseAbsolute(baseUrl, 'baseUrl');
  const prefix = base.pathname.replace(/\/+$/, '');
  if (prefix !== '' && (prefix.endsWith(own.pathname))) {
    throw new WorkflowError(
      'CONFIG',
      `\`baseUrl\` must not contain the route path: got "${baseUrl}" for route "${own.pathname}"; use "${base.origin}".`,
    );
  }
  return base.origin + prefix + own.pathname;
}
