/*
 * A typed client of the broker's REST API (`/api/mcp-broker`) for frontends, the catalog module
 * and other backends. Each method is one operation of ./brokerOperations.ts (same name as its
 * operation id): its method, path, query, body and answer types come from that entry. It throws
 * `ResponseError` (from `@backstage/errors`) for every non-2xx answer, carrying the broker's
 * error body.
 */
import { ResponseError } from '@backstage/errors';
import {
  brokerOperations,
  type BrokerOperationBody,
  type BrokerOperationId,
  type BrokerOperationParams,
  type BrokerOperationQuery,
  type BrokerOperationResponse,
} from './brokerOperations';

/** Options of {@link McpBrokerClient}. @public */
export interface McpBrokerClientOptions {
  /** The broker's base URL (`http://…/api/mcp-broker`), or a function resolving it. */
  baseUrl: string | (() => Promise<string>);
  /** Returns the Backstage token to send, if any. */
  getToken?: () => Promise<string | undefined>;
  /** The fetch implementation; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Sent with every request (e.g. `include`, for writes authenticated by the sign-in cookie). */
  credentials?: RequestCredentials;
}

/** What one call sends: its path parameters, query and body. */
interface CallInput<K extends BrokerOperationId> {
  params?: BrokerOperationParams<K>;
  query?: object;
  body?: BrokerOperationBody<K>;
}

/**
 * Typed client of every REST operation of the broker ({@link brokerOperations}).
 *
 * @public
 */
export class McpBrokerClient {
  readonly #options: McpBrokerClientOptions;

  constructor(options: McpBrokerClientOptions) {
    this.#options = options;
  }

  /** Liveness (unauthenticated). */
  getHealth(): Promise<BrokerOperationResponse<'getHealth'>> {
    return this.#call('getHealth', {});
  }
  /** Each backend's state (403 without `mcp-broker.status.read`). */
  getStatus(): Promise<BrokerOperationResponse<'getStatus'>> {
    return this.#call('getStatus', {});
  }
  /** What the caller may use, per server (403 without `mcp-broker.session.create`). */
  getCatalog(): Promise<BrokerOperationResponse<'getCatalog'>> {
    return this.#call('getCatalog', {});
  }
  /** Every server, then every endpoint, in config order. */
  listServers(): Promise<BrokerOperationResponse<'listServers'>> {
    return this.#call('listServers', {});
  }
  /** One server or endpoint; rejects with a 404 `ResponseError` when the broker has none. */
  getServer(
    params: BrokerOperationParams<'getServer'>,
  ): Promise<BrokerOperationResponse<'getServer'>> {
    return this.#call('getServer', { params });
  }
  /** The caller's own calls per day, server and tool, and their live grants. */
  getMyUsage(
    query: BrokerOperationQuery<'getMyUsage'> = {},
  ): Promise<BrokerOperationResponse<'getMyUsage'>> {
    return this.#call('getMyUsage', { query });
  }
  /** Each server's totals that the caller may read (`mcp-broker.usage.read`). */
  listServerUsage(
    query: BrokerOperationQuery<'listServerUsage'> = {},
  ): Promise<BrokerOperationResponse<'listServerUsage'>> {
    return this.#call('listServerUsage', { query });
  }
  /** One server's calls per day and tool, and a page of its people. */
  getServerUsage(
    params: BrokerOperationParams<'getServerUsage'>,
    query: BrokerOperationQuery<'getServerUsage'> = {},
  ): Promise<BrokerOperationResponse<'getServerUsage'>> {
    return this.#call('getServerUsage', { params, query });
  }
  /** Held and rejected tool definition changes (403 without `mcp-broker.tool.approve`). */
  listToolChanges(): Promise<BrokerOperationResponse<'listToolChanges'>> {
    return this.#call('listToolChanges', {});
  }
  /** Approves or rejects a held change; 409 when the backend changed the tool again since. */
  decideToolChange(
    params: BrokerOperationParams<'decideToolChange'>,
    body: BrokerOperationBody<'decideToolChange'> = {},
  ): Promise<BrokerOperationResponse<'decideToolChange'>> {
    return this.#call('decideToolChange', { params, body });
  }
  /** The caller's connections: servers taking a personal credential, and theirs. */
  listCredentials(): Promise<BrokerOperationResponse<'listCredentials'>> {
    return this.#call('listCredentials', {});
  }
  /** Stores or replaces the caller's credential (only from their browser, with the cookie). */
  storeCredential(
    params: BrokerOperationParams<'storeCredential'>,
    body: BrokerOperationBody<'storeCredential'>,
  ): Promise<BrokerOperationResponse<'storeCredential'>> {
    return this.#call('storeCredential', { params, body });
  }
  /** Deletes the caller's credential (only from their browser, with the cookie). */
  deleteCredential(params: BrokerOperationParams<'deleteCredential'>): Promise<void> {
    return this.#call('deleteCredential', { params });
  }

  async #call<K extends BrokerOperationId>(
    operationId: K,
    input: CallInput<K>,
  ): Promise<BrokerOperationResponse<K>> {
    const operation = brokerOperations[operationId];
    const { baseUrl, getToken } = this.#options;
    const base = typeof baseUrl === 'string' ? baseUrl : await baseUrl();
    const token = await getToken?.();
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (input.body !== undefined) headers['content-type'] = 'application/json';
    const response = await (this.#options.fetch ?? fetch)(
      `${base.replace(/\/+$/, '')}${pathOf(operation.path, input.params)}${queryOf(input.query)}`,
      {
        method: operation.method.toUpperCase(),
        headers,
        ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
        ...(this.#options.credentials === undefined
          ? {}
          : { credentials: this.#options.credentials }),
      },
    );
    if (!response.ok) {
      throw await ResponseError.fromResponse(response);
    }
    if (operation.status === 204) return undefined as BrokerOperationResponse<K>;
    return (await response.json()) as BrokerOperationResponse<K>;
  }
}

/** `/servers/:kind/:name` with `{kind, name}` → `/servers/server/example` (each encoded). */
function pathOf(template: string, params: object | undefined): string {
  const values = (params ?? {}) as Record<string, string>;
  return template.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new TypeError(`Missing path parameter ${name} of ${template}`);
    return encodeURIComponent(value);
  });
}

/** The query string of the defined entries of `query` (`''` when there are none). */
function queryOf(query: object | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
