/*
 * A typed client of the portal REST API (`/api/portal`) for frontends, scripts and other
 * backends. It speaks the exact shapes of ./types.ts and throws `ResponseError` (from
 * `@backstage/errors`) for every non-2xx answer, carrying the server's error body.
 *
 * Every list takes `limit` / `continue` (one page), and has a `...Pages` twin: an async
 * iterator that walks every page, sending each page's `continue` with the same filters
 * (`for await (const page of client.listRequestsPages({ status: 'Pending' })) ...`).
 */
import { ResponseError } from '@backstage/errors';
import type {
  ApiKey,
  ApiKeyPhase,
  ApiProduct,
  BulkReviewRequest,
  BulkReviewResult,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  KubeObject,
  ListPage,
  ObjectRef,
  PageQuery,
  UpdateApiKeyRequest,
} from './types';

/**
 * A JSON merge patch of an API product: `spec` fields, `metadata.labels`, the owner
 * annotation and an optional `metadata.resourceVersion` precondition.
 *
 * @public
 */
export interface ApiProductPatch {
  metadata?: {
    labels?: Record<string, string | null> | null;
    annotations?: { 'backstage.io/owner'?: string };
    resourceVersion?: string;
  };
  spec?: Record<string, unknown>;
}

/** A read-only object (HTTPRoute, PlanPolicy, AuthPolicy, RateLimitPolicy). @public */
export type ReadOnlyObject = Omit<KubeObject, 'metadata'> & {
  metadata: Partial<KubeObject['metadata']> & {
    namespace: string;
    name: string;
  };
};

/** Options of {@link PortalClient}. @public */
export interface PortalClientOptions {
  /**
   * The portal's base URL, e.g. `http://localhost:7007/api/portal`, or a function
   * resolving it (for example Backstage's `discoveryApi.getBaseUrl('portal')`).
   */
  baseUrl: string | (() => Promise<string>);
  /** Returns the Backstage token to send, if any. */
  getToken?: () => Promise<string | undefined>;
  /** The fetch implementation; default the global `fetch`. */
  fetch?: typeof fetch;
}

/** @public */
export interface RequestListQuery {
  status?: ApiKeyPhase;
  namespace?: string;
}

/** Filter of the lists that filter by namespace only. @public */
export interface NamespaceListQuery {
  namespace?: string;
}

/** Options of the `...Pages` iterators. @public */
export interface PageWalkOptions {
  /** Items per page, 1–1000; default {@link DEFAULT_PAGE_LIMIT}. */
  limit?: number;
}

/** The page size of the `...Pages` iterators when none is given. @public */
export const DEFAULT_PAGE_LIMIT = 100;

function path(ref: ObjectRef): string {
  return `${encodeURIComponent(ref.namespace)}/${encodeURIComponent(ref.name)}`;
}

/**
 * Typed client of every portal endpoint.
 *
 * @public
 */
export class PortalClient {
  readonly #options: PortalClientOptions;

  constructor(options: PortalClientOptions) {
    this.#options = options;
  }

  listApiProducts(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ApiProduct>> {
    return this.#call('GET', '/apiproducts', { query });
  }
  /** Every page of {@link PortalClient.listApiProducts}. */
  listApiProductsPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiProduct>> {
    return this.#pages('/apiproducts', query, options);
  }
  getApiProduct(ref: ObjectRef): Promise<ApiProduct> {
    return this.#call('GET', `/apiproducts/${path(ref)}`);
  }
  createApiProduct(body: CreateApiProductRequest): Promise<ApiProduct> {
    return this.#call('POST', '/apiproducts', { body });
  }
  updateApiProduct(ref: ObjectRef, patch: ApiProductPatch): Promise<ApiProduct> {
    return this.#call('PATCH', `/apiproducts/${path(ref)}`, {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }
  deleteApiProduct(ref: ObjectRef): Promise<void> {
    return this.#call('DELETE', `/apiproducts/${path(ref)}`);
  }
  listHttpRoutes(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('GET', '/httproutes', { query });
  }
  /** Every page of {@link PortalClient.listHttpRoutes}. */
  listHttpRoutesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('/httproutes', query, options);
  }
  listPlanPolicies(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('GET', '/planpolicies', { query });
  }
  /** Every page of {@link PortalClient.listPlanPolicies}. */
  listPlanPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('/planpolicies', query, options);
  }
  getPlanPolicy(ref: ObjectRef): Promise<ReadOnlyObject> {
    return this.#call('GET', `/planpolicies/${path(ref)}`);
  }
  listAuthPolicies(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('GET', '/authpolicies', { query });
  }
  /** Every page of {@link PortalClient.listAuthPolicies}. */
  listAuthPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('/authpolicies', query, options);
  }
  listRateLimitPolicies(
    query: NamespaceListQuery & PageQuery = {},
  ): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('GET', '/ratelimitpolicies', { query });
  }
  /** Every page of {@link PortalClient.listRateLimitPolicies}. */
  listRateLimitPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('/ratelimitpolicies', query, options);
  }
  listRequests(query: RequestListQuery & PageQuery = {}): Promise<ListPage<ApiKey>> {
    return this.#call('GET', '/requests', { query });
  }
  /** Every page of {@link PortalClient.listRequests}. */
  listRequestsPages(
    query: RequestListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiKey>> {
    return this.#pages('/requests', query, options);
  }
  listMyRequests(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ApiKey>> {
    return this.#call('GET', '/requests/my', { query });
  }
  /** Every page of {@link PortalClient.listMyRequests}. */
  listMyRequestsPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiKey>> {
    return this.#pages('/requests/my', query, options);
  }
  createRequest(body: CreateApiKeyRequest): Promise<ApiKey> {
    return this.#call('POST', '/requests', { body });
  }
  updateRequest(ref: ObjectRef, body: UpdateApiKeyRequest): Promise<ApiKey> {
    return this.#call('PATCH', `/requests/${path(ref)}`, { body });
  }
  deleteRequest(ref: ObjectRef): Promise<void> {
    return this.#call('DELETE', `/requests/${path(ref)}`);
  }
  approveRequest(ref: ObjectRef, body: { reason?: string } = {}): Promise<ApiKey> {
    return this.#call('POST', `/requests/${path(ref)}/approve`, { body });
  }
  rejectRequest(ref: ObjectRef, body: { reason?: string } = {}): Promise<ApiKey> {
    return this.#call('POST', `/requests/${path(ref)}/reject`, { body });
  }
  bulkApproveRequests(body: BulkReviewRequest): Promise<{ results: BulkReviewResult[] }> {
    return this.#call('POST', '/requests/bulk-approve', { body });
  }
  bulkRejectRequests(body: BulkReviewRequest): Promise<{ results: BulkReviewResult[] }> {
    return this.#call('POST', '/requests/bulk-reject', { body });
  }
  /** The key's secret: answers on the first successful read only (409 afterwards). */
  revealApiKeySecret(ref: ObjectRef): Promise<{ apiKey: string }> {
    return this.#call('GET', `/apikeys/${path(ref)}/secret`);
  }

  async *#pages<T>(
    route: string,
    filters: object,
    options: PageWalkOptions,
  ): AsyncIterableIterator<ListPage<T>> {
    const limit = options.limit ?? DEFAULT_PAGE_LIMIT;
    let token: string | undefined;
    do {
      const page: ListPage<T> = await this.#call('GET', route, {
        query: { ...filters, limit, continue: token },
      });
      yield page;
      token = page.metadata?.continue;
    } while (token !== undefined);
  }

  async #call<T>(
    method: string,
    route: string,
    options: { query?: object; body?: unknown; contentType?: string } = {},
  ): Promise<T> {
    const base =
      typeof this.#options.baseUrl === 'string'
        ? this.#options.baseUrl
        : await this.#options.baseUrl();
    const url = new URL(`${base.replace(/\/$/, '')}${route}`);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {};
    const token = await this.#options.getToken?.();
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
    }
    const doFetch = this.#options.fetch ?? fetch;
    const response = await doFetch(url.toString(), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    if (!response.ok) {
      throw await ResponseError.fromResponse(response);
    }
    if (response.status === 204) {
      return undefined as T;
    }
    return (await response.json()) as T;
  }
}
