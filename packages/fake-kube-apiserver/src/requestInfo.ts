/**
 * Resolves a URL into Kubernetes request attributes the way
 * `k8s.io/apiserver/pkg/endpoints/request.RequestInfoFactory` does:
 * `/api/v1/...` and `/apis/<group>/<version>/...`, `namespaces/<ns>/`
 * scoping (with `status`/`finalize` as namespace subresources), the verb from
 * the method plus `?watch=true`, and the legacy `/watch/` prefix.
 */
import { KubeRequestInfo, KubeVerb } from './faults';

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Parses method + URL into {@link KubeRequestInfo}. */
export function resolveRequestInfo(method: string, url: URL): KubeRequestInfo {
  const query = Object.fromEntries(url.searchParams.entries());
  const info: KubeRequestInfo = {
    method,
    path: url.pathname,
    query,
    isResourceRequest: false,
  };
  const parts = url.pathname
    .split('/')
    .filter(p => p !== '')
    .map(decodeURIComponent);
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    info.apiGroup = '';
    info.apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    rest = parts.slice(3);
  } else {
    return info;
  }
  info.isResourceRequest = true;
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1];
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) {
        rest = rest.slice(2);
      }
    }
  }
  info.resource = rest[0];
  if (rest.length >= 2) info.name = rest[1];
  if (rest.length >= 3) info.subresource = rest[2];

  const watchParam = query.watch === 'true' || query.watch === '1';
  let verb: KubeVerb;
  switch (method) {
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = info.name === undefined ? 'deletecollection' : 'delete';
      break;
    default:
      if (legacyWatch || watchParam) verb = 'watch';
      else verb = info.name === undefined ? 'list' : 'get';
  }
  info.verb = verb;
  return info;
}
