/*
 * McpBrokerApi over HTTP: discovery finds the broker (plugin id `mcp-broker`), the app's fetchApi
 * adds the user's Backstage token, and a non-2xx answer throws ResponseError carrying the server's
 * error body (its message is what the page shows).
 *
 * Personal credential writes are the exception. The broker takes them only from the person's
 * browser — Backstage's sign-in cookie for the broker and the app's `Origin`, no token
 * (CredentialWriteGuard: an MCP client holding the person's token must not swap the credential
 * the broker presents for them) — and fetchApi always adds the token. So a write first asks
 * the broker for the cookie through fetchApi (`/.backstage/auth/v1/cookie`, as Backstage's
 * cookie-auth plugins such as TechDocs do), then goes out through the browser's own fetch with
 * `credentials: 'include'` and no Authorization header; the browser adds `Origin` itself.
 */
import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  McpBrokerCatalog,
  McpToolChangeDecision,
  McpServerUsage,
  McpServerUsageList,
  McpToolChanges,
  MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import type { McpBrokerApi, McpBrokerStatus, McpConnection } from './McpBrokerApi';

/** The broker's plugin id, as discovery knows it. */
const BROKER_PLUGIN_ID = 'mcp-broker';

/**
 * {@link McpBrokerApi} over the broker's REST routes.
 *
 * @public
 */
export class McpBrokerClient implements McpBrokerApi {
  readonly #discoveryApi: DiscoveryApi;
  readonly #fetchApi: FetchApi;

  readonly #cookieFetch: typeof fetch;

  /**
   * `cookieFetch` sends the cookie-authenticated credential writes (see the file comment);
   * default: the browser's `fetch`.
   */
  constructor(options: {
    discoveryApi: DiscoveryApi;
    fetchApi: FetchApi;
    cookieFetch?: typeof fetch;
  }) {
    this.#discoveryApi = options.discoveryApi;
    this.#fetchApi = options.fetchApi;
    this.#cookieFetch = options.cookieFetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  async getEndpointUrl(): Promise<string> {
    return `${await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID)}/mcp`;
  }

  getCatalog(): Promise<McpBrokerCatalog> {
    return this.#get('/catalog');
  }

  getStatus(): Promise<McpBrokerStatus> {
    return this.#get('/status');
  }

  getToolChanges(): Promise<McpToolChanges> {
    return this.#get('/pins');
  }

  async decideToolChange(
    server: string,
    tool: string,
    decision: McpToolChangeDecision,
    digest: string,
  ): Promise<void> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    const path = `/pins/${encodeURIComponent(server)}/${encodeURIComponent(tool)}/${decision}`;
    const response = await this.#fetchApi.fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ digest }),
    });
    if (!response.ok) throw await ResponseError.fromResponse(response);
  }

  async listConnections(): Promise<McpConnection[]> {
    return (await this.#get<{ items: McpConnection[] }>('/credentials')).items;
  }

  async storeConnection(server: string, value: string, elicitationId?: string): Promise<void> {
    await this.#cookieWrite(server, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(elicitationId === undefined ? { value } : { value, elicitationId }),
    });
  }

  async deleteConnection(server: string): Promise<void> {
    await this.#cookieWrite(server, { method: 'DELETE' });
  }

  getMyUsage(days: number): Promise<MyMcpUsage> {
    return this.#get(`/usage/my?${new URLSearchParams({ days: String(days) })}`);
  }

  listServerUsage(days: number): Promise<McpServerUsageList> {
    return this.#get(`/usage/servers?${new URLSearchParams({ days: String(days) })}`);
  }

  getServerUsage(
    server: string,
    options: { days: number; limit?: number; continue?: string },
  ): Promise<McpServerUsage> {
    const query = new URLSearchParams({ days: String(options.days) });
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.continue !== undefined) query.set('continue', options.continue);
    return this.#get(`/usage/servers/${encodeURIComponent(server)}?${query}`);
  }

  async #cookieWrite(server: string, init: RequestInit): Promise<void> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    // Sets (or refreshes) Backstage's sign-in cookie for the broker: the token goes here only.
    const cookie = await this.#fetchApi.fetch(`${base}/.backstage/auth/v1/cookie`, {
      credentials: 'include',
    });
    if (!cookie.ok) throw await ResponseError.fromResponse(cookie);
    const response = await this.#cookieFetch(`${base}/credentials/${encodeURIComponent(server)}`, {
      ...init,
      credentials: 'include',
    });
    if (!response.ok) throw await ResponseError.fromResponse(response);
  }

  async #get<T>(route: string): Promise<T> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    const response = await this.#fetchApi.fetch(`${base}${route}`);
    if (!response.ok) throw await ResponseError.fromResponse(response);
    return (await response.json()) as T;
  }
}
