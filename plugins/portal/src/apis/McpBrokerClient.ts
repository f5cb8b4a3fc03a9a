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
import {
  McpBrokerClient as BrokerRestClient,
  type McpBrokerCatalog,
  type McpToolChangeDecision,
  type McpServerUsage,
  type McpServerUsageList,
  type McpToolChanges,
  type MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import { ResponseError } from '@backstage/errors';
import type { McpBrokerApi, McpBrokerStatus, McpConnection } from './McpBrokerApi';

/** The broker's plugin id, as discovery knows it. */
const BROKER_PLUGIN_ID = 'mcp-broker';

/**
 * {@link McpBrokerApi} over the broker's REST routes: the calls are those of the shared
 * `McpBrokerClient` of `@devportal/plugin-mcp-broker-common`, built from the broker's
 * operation table.
 *
 * @public
 */
export class McpBrokerClient implements McpBrokerApi {
  readonly #discoveryApi: DiscoveryApi;
  readonly #fetchApi: FetchApi;
  /** Calls with the user's Backstage token (fetchApi adds it). */
  readonly #broker: BrokerRestClient;
  /** Calls with the sign-in cookie and no token: the credential writes. */
  readonly #cookieBroker: BrokerRestClient;

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
    const baseUrl = () => options.discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    this.#broker = new BrokerRestClient({
      baseUrl,
      fetch: (input, init) => options.fetchApi.fetch(input, init),
    });
    const cookieFetch = options.cookieFetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#cookieBroker = new BrokerRestClient({
      baseUrl,
      fetch: cookieFetch,
      credentials: 'include',
    });
  }

  async getEndpointUrl(): Promise<string> {
    return `${await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID)}/mcp`;
  }

  getCatalog(): Promise<McpBrokerCatalog> {
    return this.#broker.getCatalog();
  }

  getStatus(): Promise<McpBrokerStatus> {
    return this.#broker.getStatus();
  }

  getToolChanges(): Promise<McpToolChanges> {
    return this.#broker.listToolChanges();
  }

  async decideToolChange(
    server: string,
    tool: string,
    decision: McpToolChangeDecision,
    digest: string,
  ): Promise<void> {
    await this.#broker.decideToolChange({ server, tool, decision }, { digest });
  }

  async listConnections(): Promise<McpConnection[]> {
    return (await this.#broker.listCredentials()).items;
  }

  async storeConnection(server: string, value: string, elicitationId?: string): Promise<void> {
    await this.#setCookie();
    await this.#cookieBroker.storeCredential(
      { server },
      elicitationId === undefined ? { value } : { value, elicitationId },
    );
  }

  async deleteConnection(server: string): Promise<void> {
    await this.#setCookie();
    await this.#cookieBroker.deleteCredential({ server });
  }

  getMyUsage(days: number): Promise<MyMcpUsage> {
    return this.#broker.getMyUsage({ days });
  }

  listServerUsage(days: number): Promise<McpServerUsageList> {
    return this.#broker.listServerUsage({ days });
  }

  getServerUsage(
    server: string,
    options: { days: number; limit?: number; continue?: string },
  ): Promise<McpServerUsage> {
    return this.#broker.getServerUsage({ server }, options);
  }

  /** Sets (or refreshes) Backstage's sign-in cookie for the broker: the token goes here only. */
  async #setCookie(): Promise<void> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    const cookie = await this.#fetchApi.fetch(`${base}/.backstage/auth/v1/cookie`, {
      credentials: 'include',
    });
    if (!cookie.ok) throw await ResponseError.fromResponse(cookie);
  }
}
