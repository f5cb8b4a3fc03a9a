/*
 * Counts the HTTP calls a backend made, from its access log (the rootHttpRouter's
 * `incomingRequest` lines, printed at LOG_LEVEL=info). In a Backstage backend the
 * plugins talk to each other over HTTP even inside one process (the permission
 * service POSTs to /api/permission/authorize, the user-info service GETs
 * /api/auth/v1/userinfo, the RBAC plugin asks the catalog for the user's groups), so
 * every such call of a portal request appears as a line of its own.
 */

const ANSI = /\u001b\[[0-9;]*m/g;
const REQUEST_LINE = /"([A-Z]+) (\S+) HTTP\/[\d.]+"/;

/** Buckets of internal calls, in the order the tables show them. */
export const CALL_KINDS = ['authorize', 'userinfo', 'catalog', 'jwks', 'other'];

function kindOf(method, url) {
  if (method === 'POST' && url.startsWith('/api/permission/authorize')) return 'authorize';
  if (url.startsWith('/api/auth/v1/userinfo')) return 'userinfo';
  if (url.startsWith('/api/catalog/')) return 'catalog';
  if (url.includes('jwks.json')) return 'jwks';
  return 'other';
}

/** The `[method, url]` of every access-log line in `text`. */
export function accessLogRequests(text) {
  const requests = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(ANSI, '');
    if (!line.includes('incomingRequest')) continue;
    const match = REQUEST_LINE.exec(line);
    if (match) requests.push([match[1], match[2]]);
  }
  return requests;
}

/**
 * Counts what `text` (a slice of the backend's output) holds: portal requests (the
 * calls the benchmark made, matched by `isPortalCall(method, url)`) and the internal
 * calls by kind.
 */
export function countCalls(text, isPortalCall) {
  const counts = { portal: 0, authorize: 0, userinfo: 0, catalog: 0, jwks: 0, other: 0 };
  for (const [method, url] of accessLogRequests(text)) {
    if (isPortalCall(method, url)) counts.portal += 1;
    else counts[kindOf(method, url)] += 1;
  }
  return counts;
}
