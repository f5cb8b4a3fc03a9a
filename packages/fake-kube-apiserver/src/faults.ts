/**
 * Fault injection and the request log. Rules match on the request's
 * Kubernetes attributes (verb, resource, namespace, …, as the apiserver's
 * RequestInfo resolves them) and fire a bounded number of times.
 */

/** Kubernetes API verbs, as authorization sees them. */
export type KubeVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** The parsed attributes of one request (kube-apiserver's `RequestInfo`). */
export interface KubeRequestInfo {
  method: string;
  path: string;
  query: Record<string, string>;
  isResourceRequest: boolean;
  verb?: KubeVerb;
  apiGroup?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** One entry of the request log. */
export interface RecordedRequest extends KubeRequestInfo {
  /** Response status code (0 while still open or when the connection was dropped). */
  status: number;
  contentType?: string;
  /** Request body as sent (for writes). */
  body?: string;
}

/**
 * Which requests a fault applies to: attribute equality (arrays mean "any
 * of"), or a predicate.
 */
export type RequestMatcher =
  | {
      verb?: KubeVerb | KubeVerb[];
      resource?: string | string[];
      subresource?: string;
      apiGroup?: string;
      namespace?: string;
      name?: string;
      method?: string;
    }
  | ((request: KubeRequestInfo) => boolean);

/** What an injected fault does. */
export type Fault =
  | { type: 'status'; code: number; message?: string; retryAfterSeconds?: number }
  | { type: 'delay'; ms: number }
  | { type: 'hold'; released: Promise<void> }
  | { type: 'hang' }
  | { type: 'reset' }
  | { type: 'forbid' };

/** A registered fault; `remove()` takes it out early. */
export interface FaultHandle {
  /** How many requests it affected so far. */
  readonly hits: number;
  remove(): void;
}

/** Requests held by a `hold` fault until the test releases them. */
export interface HeldRequests extends FaultHandle {
  /** Serves the held requests (and any later match of this rule) normally. */
  release(): void;
}

/** Tests whether a request matches a {@link RequestMatcher}. */
export function matchesRequest(matcher: RequestMatcher | undefined, req: KubeRequestInfo): boolean {
  if (matcher === undefined) return true;
  if (typeof matcher === 'function') return matcher(req);
  const eq = <T>(want: T | T[] | undefined, got: T | undefined) =>
    want === undefined || (Array.isArray(want) ? want.includes(got as T) : want === got);
  return (
    eq(matcher.verb, req.verb) &&
    eq(matcher.resource, req.resource) &&
    eq(matcher.subresource, req.subresource) &&
    eq(matcher.apiGroup, req.apiGroup) &&
    eq(matcher.namespace, req.namespace) &&
    eq(matcher.name, req.name) &&
    eq(matcher.method?.toUpperCase(), req.method)
  );
}
