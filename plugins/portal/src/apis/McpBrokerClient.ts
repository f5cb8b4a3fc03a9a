/*
 * McpBrokerApi over HTTP: discovery finds the broker (plugin id `mcp-broker`), the app's fetchApi
 * adds the user's Backstage token, and a non-2xx answer throws ResponseError carrying the server's
 * error body (its message is what the page shows).
 */
import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type { McpBrokerCatalog } from '@devportal/plugin-mcp-broker-common';
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

  async #get<T>(route: string): Promise<T> {
    const base = await this.#discoveryApi.getBaseUrl(BROKER_PLUGIN_ID);
    const response = await this.#fetchApi.fetch(`${base}${route}`);
    if (!response.ok) throw await ResponseError.fromResponse(response);
    return (await response.json()) as T;
  }
}
