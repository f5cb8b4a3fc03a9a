/*
 * A typed client of the portal REST API (`/api/portal`) for frontends, scripts and other
 * backends. Each method is one operation of ./portalOperations.ts (its path, method, body and
 * answer types come from there), and it throws `ResponseError` (from `@backstage/errors`) for
 * every non-2xx answer, carrying the server's error body.
 *
 * Every list takes `limit` / `continue` (one page), and has a `...Pages` twin: an async
 * iterator that walks every page, sending each page's `continue` with the same filters
 * (`for await (const page of client.listRequestsPages({ status: 'Pending' })) ...`).
 */
import { ResponseError } from '@backstage/errors';
import {
  portalOperations,
  type PortalOperationBody,
  type PortalOperationId,
  type PortalOperationResponse,
} from './portalOperations';
import type {
  ApiKey,
  ApiKeySecret,
  ApiProduct,
  ApiProductPatch,
  BulkReviewRequest,
  BulkReviewResponse,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  DeleteRequestQuery,
  ListPage,
  McpGrant,
  McpGrantListQuery,
  NamespaceListQuery,
  ObjectRef,
  PageQuery,
  ProductListQuery,
  ReadOnlyObject,
  RequestListQuery,
  ReviewRequest,
  UpdateApiKeyRequest,
} from './types';

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

/** Options of the `...Pages` iterators. @public */
export interface PageWalkOptions {
  /** Items per page, 1–1000; default {@link DEFAULT_PAGE_LIMIT}. */
  limit?: number;
}

/** The page size of the `...Pages` iterators when none is given. @public */
export const DEFAULT_PAGE_LIMIT = 100;

/** The operations that answer a list page (they take `limit` and `continue`). */
type ListOperationId = {
  [K in PortalOperationId]: PortalOperationResponse<K> extends ListPage<unknown> ? K : never;
}[PortalOperationId];

/** What one call sends: the record it names, its query, its body. */
interface CallInput<K extends PortalOperationId> {
  ref?: ObjectRef;
  query?: object;
  body?: PortalOperationBody<K>;
  /** Default `application/json`. */
  contentType?: string;
}

/**
 * Typed client of every portal endpoint. Each method is one operation of
 * {@link portalOperations} (same name as its operationId): the method, path, body type and
 * answer type come from that entry.
 *
 * @public
 */
export class PortalClient {
  readonly #options: PortalClientOptions;

  constructor(options: PortalClientOptions) {
    this.#options = options;
  }

  listApiProducts(query: ProductListQuery & PageQuery = {}): Promise<ListPage<ApiProduct>> {
    return this.#call('listApiProducts', { query });
  }
  /** Every page of {@link PortalClient.listApiProducts}. */
  listApiProductsPages(
    query: ProductListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiProduct>> {
    return this.#pages('listApiProducts', query, options);
  }
  getApiProduct(ref: ObjectRef): Promise<ApiProduct> {
    return this.#call('getApiProduct', { ref });
  }
  createApiProduct(body: CreateApiProductRequest): Promise<ApiProduct> {
    return this.#call('createApiProduct', { body });
  }
  updateApiProduct(ref: ObjectRef, patch: ApiProductPatch): Promise<ApiProduct> {
    return this.#call('updateApiProduct', {
      ref,
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }
  deleteApiProduct(ref: ObjectRef): Promise<void> {
    return this.#call('deleteApiProduct', { ref });
  }
  listHttpRoutes(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('listHttpRoutes', { query });
  }
  /** Every page of {@link PortalClient.listHttpRoutes}. */
  listHttpRoutesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('listHttpRoutes', query, options);
  }
  listPlanPolicies(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('listPlanPolicies', { query });
  }
  /** Every page of {@link PortalClient.listPlanPolicies}. */
  listPlanPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('listPlanPolicies', query, options);
  }
  getPlanPolicy(ref: ObjectRef): Promise<ReadOnlyObject> {
    return this.#call('getPlanPolicy', { ref });
  }
  listAuthPolicies(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('listAuthPolicies', { query });
  }
  /** Every page of {@link PortalClient.listAuthPolicies}. */
  listAuthPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('listAuthPolicies', query, options);
  }
  listRateLimitPolicies(
    query: NamespaceListQuery & PageQuery = {},
  ): Promise<ListPage<ReadOnlyObject>> {
    return this.#call('listRateLimitPolicies', { query });
  }
  /** Every page of {@link PortalClient.listRateLimitPolicies}. */
  listRateLimitPoliciesPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ReadOnlyObject>> {
    return this.#pages('listRateLimitPolicies', query, options);
  }
  listRequests(query: RequestListQuery & PageQuery = {}): Promise<ListPage<ApiKey>> {
    return this.#call('listRequests', { query });
  }
  /** Every page of {@link PortalClient.listRequests}. */
  listRequestsPages(
    query: RequestListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiKey>> {
    return this.#pages('listRequests', query, options);
  }
  listMyRequests(query: NamespaceListQuery & PageQuery = {}): Promise<ListPage<ApiKey>> {
    return this.#call('listMyRequests', { query });
  }
  /** Every page of {@link PortalClient.listMyRequests}. */
  listMyRequestsPages(
    query: NamespaceListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<ApiKey>> {
    return this.#pages('listMyRequests', query, options);
  }
  createRequest(body: CreateApiKeyRequest): Promise<ApiKey> {
    return this.#call('createRequest', { body });
  }
  updateRequest(ref: ObjectRef, body: UpdateApiKeyRequest): Promise<ApiKey> {
    return this.#call('updateRequest', { ref, body });
  }
  /** Deletes (an Approved key: revokes) a request; `reason` is told to its requester. */
  deleteRequest(ref: ObjectRef, query: DeleteRequestQuery = {}): Promise<void> {
    return this.#call('deleteRequest', { ref, query });
  }
  /** Revokes an Approved key (its product's owners, admins); `reason` is told to its requester. */
  revokeRequest(ref: ObjectRef, body: ReviewRequest = {}): Promise<void> {
    return this.#call('revokeRequest', { ref, body });
  }
  approveRequest(ref: ObjectRef, body: ReviewRequest = {}): Promise<ApiKey> {
    return this.#call('approveRequest', { ref, body });
  }
  rejectRequest(ref: ObjectRef, body: ReviewRequest = {}): Promise<ApiKey> {
    return this.#call('rejectRequest', { ref, body });
  }
  bulkApproveRequests(body: BulkReviewRequest): Promise<BulkReviewResponse> {
    return this.#call('bulkApproveRequests', { body });
  }
  bulkRejectRequests(body: BulkReviewRequest): Promise<BulkReviewResponse> {
    return this.#call('bulkRejectRequests', { body });
  }
  /** The key's secret: answers on the first successful read only (409 afterwards). */
  revealApiKeySecret(ref: ObjectRef): Promise<ApiKeySecret> {
    return this.#call('revealApiKeySecret', { ref });
  }

  /** Live access grants of MCP products (`portal.mcpgrant.list`; the broker's portal module). */
  listMcpGrants(query: McpGrantListQuery & PageQuery = {}): Promise<ListPage<McpGrant>> {
    return this.#call('listMcpGrants', { query });
  }
  /** Every page of {@link PortalClient.listMcpGrants}. */
  listMcpGrantsPages(
    query: McpGrantListQuery = {},
    options: PageWalkOptions = {},
  ): AsyncIterableIterator<ListPage<McpGrant>> {
    return this.#pages('listMcpGrants', query, options);
  }
  /** One live grant by its access request's namespace and name; 404 unless live now. */
  getMcpGrant(ref: ObjectRef): Promise<McpGrant> {
    return this.#call('getMcpGrant', { ref });
  }

  async *#pages<K extends ListOperationId>(
    operationId: K,
    filters: object,
    options: PageWalkOptions,
  ): AsyncIterableIterator<PortalOperationResponse<K>> {
    const limit = options.limit ?? DEFAULT_PAGE_LIMIT;
    let token: string | undefined;
    do {
      const page = await this.#call(operationId, {
        query: { ...filters, limit, continue: token },
      });
      yield page;
      // An answer without `metadata` (an older or a stub server) is the last page.
      token = (page as Partial<ListPage<unknown>> | undefined)?.metadata?.continue;
    } while (token !== undefined);
  }

  async #call<K extends PortalOperationId>(
    operationId: K,
    input: CallInput<K> = {},
  ): Promise<PortalOperationResponse<K>> {
    const operation = portalOperations[operationId];
    const base =
      typeof this.#options.baseUrl === 'string'
        ? this.#options.baseUrl
        : await this.#options.baseUrl();
    const route = operation.path.replace(/:([A-Za-z]+)/g, (_, parameter: string) => {
      const value = (input.ref as Record<string, string> | undefined)?.[parameter];
      if (value === undefined) {
        throw new TypeError(`${operationId} needs ref.${parameter}`);
      }
      return encodeURIComponent(value);
    });
    const url = new URL(`${base.replace(/\/$/, '')}${route}`);
    for (const [key, value] of Object.entries(input.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = {};
    const token = await this.#options.getToken?.();
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    if (input.body !== undefined) {
      headers['Content-Type'] = input.contentType ?? 'application/json';
    }
    const doFetch = this.#options.fetch ?? fetch;
    const response = await doFetch(url.toString(), {
      method: operation.method.toUpperCase(),
      headers,
      body: input.body === undefined ? undefined : JSON.stringify(input.body),
    });
    if (!response.ok) {
      throw await ResponseError.fromResponse(response);
    }
    if (response.status === 204) {
      return undefined as PortalOperationResponse<K>;
    }
    return (await response.json()) as PortalOperationResponse<K>;
  }
}
