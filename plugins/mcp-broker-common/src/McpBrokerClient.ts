/*
 * A typed client of the broker's server descriptions (`/api/mcp-broker/servers`), for the
 * catalog module and other backends. It throws `ResponseError` (from `@backstage/errors`) for
 * every non-2xx answer, carrying the broker's error body.
 */
import { ResponseError } from '@backstage/errors';
import type { McpServerDescription, McpServerKind, McpServerList } from './servers';

/** Options of {@link McpBrokerClient}. @public */
export interface McpBrokerClientOptions {
  /** The broker's base URL (`http://…/api/mcp-broker`), or a function resolving it. */
  baseUrl: string | (() => Promise<string>);
  /** Returns the Backstage token to send, if any. */
  getToken?: () => Promise<string | undefined>;
  /** The fetch implementation; default the global `fetch`. */
  fetch?: typeof fetch;
}

/** Reads the broker's server descriptions. @public */
export class McpBrokerClient {
  readonly #options: McpBrokerClientOptions;

  constructor(options: McpBrokerClientOptions) {
    this.#options = options;
  }

  /** Every server, then every endpoint, in config order. */
  async listServers(): Promise<McpServerList> {
    return (await this.#get('/servers')) as McpServerList;
  }

  /** One server or endpoint; rejects with a 404 `ResponseError` when the broker has none. */
  async getServer(ref: { kind: McpServerKind; name: string }): Promise<McpServerDescription> {
    const path = `/servers/${encodeURIComponent(ref.kind)}/${encodeURIComponent(ref.name)}`;
    return (await this.#get(path)) as McpServerDescription;
  }

  async #get(path: string): Promise<unknown> {
    const { baseUrl, getToken } = this.#options;
    const base = typeof baseUrl === 'string' ? baseUrl : await baseUrl();
    const token = await getToken?.();
    const response = await (this.#options.fetch ?? fetch)(`${base.replace(/\/+$/, '')}${path}`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    if (!response.ok) {
      throw await ResponseError.fromResponse(response);
    }
    return response.json();
  }
}
