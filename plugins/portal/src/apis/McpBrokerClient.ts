/*
 * McpBrokerApi over HTTP: discovery finds the broker (plugin id `mcp-broker`), the app's fetchApi
 * adds the user's Backstage token, and a non-2xx answer throws ResponseError carrying the server's
 * error body (its message is what the page shows).
 */
import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  McpBrokerCatalog,
  McpToolChangeDecision,
  McpToolChanges,
} from '@devportal/plugin-mcp-broker-common';
import type { McpBrokerApi, McpBrokerStatus } from './McpBrokerApi';

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

  constructor(options: { discoveryApi: DiscoveryApi; fetchApi: FetchApi }) {
    this.#discoveryApi = options.discoveryApi;
    this.#fetchApi = options.fetchApi;
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

  async #get<T>(route: string): Promise<T> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    const response = await this.#fetchApi.fetch(`${base}${route}`);
    if (!response.ok) throw await ResponseError.fromResponse(response);
    return (await response.json()) as T;
  }
}
