/*
 * Backstage's auth backend as the broker's authorization server. Its OpenID configuration is read
 * from the auth plugin itself, on each request (a client reads it once per sign-in), and passed
 * on unchanged: every endpoint in it is Backstage's own, and the broker never describes a second
 * authorization server. Failure mode: when the auth plugin cannot be asked (down, timing out,
 * answering something that is not a configuration document) the caller gets an
 * AuthorizationServerUnavailableError and answers 502, which stock MCP clients take as "try the
 * next discovery URL".
 */
import type { DiscoveryService } from '@backstage/backend-plugin-api';

/** How long the auth plugin may take to answer. */
export const AUTHORIZATION_SERVER_TIMEOUT_MS = 5_000;

/** The auth backend's OpenID configuration could not be read. */
export class AuthorizationServerUnavailableError extends Error {
  override readonly name = 'AuthorizationServerUnavailableError';
}

/** Options of {@link BackstageAuthorizationServer.create}. */
export interface BackstageAuthorizationServerOptions {
  discovery: DiscoveryService;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Default {@link AUTHORIZATION_SERVER_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** Reads the OpenID configuration of Backstage's auth backend. */
export class BackstageAuthorizationServer {
  readonly #discovery: DiscoveryService;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  static create(options: BackstageAuthorizationServerOptions): BackstageAuthorizationServer {
    return new BackstageAuthorizationServer(options);
  }

  private constructor(options: BackstageAuthorizationServerOptions) {
    this.#discovery = options.discovery;
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? AUTHORIZATION_SERVER_TIMEOUT_MS;
  }

  /**
   * The auth backend's `/.well-known/openid-configuration` document as it serves it. Throws
   * {@link AuthorizationServerUnavailableError} (with the cause, never a token) when it cannot.
   */
  async configuration(): Promise<Record<string, unknown>> {
    const url = `${await this.#discovery.getBaseUrl('auth')}/.well-known/openid-configuration`;
    let body: unknown;
    try {
      const response = await this.#fetch(url, {
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      body = await response.json();
    } catch (error) {
      throw new AuthorizationServerUnavailableError(
        `Backstage's auth backend did not give its OpenID configuration (${url}): ${
          (error as Error).message
        }`,
      );
    }
    if (
      typeof body !== 'object' ||
      body === null ||
      Array.isArray(body) ||
      typeof (body as { issuer?: unknown }).issuer !== 'string'
    ) {
      throw new AuthorizationServerUnavailableError(
        `Backstage's auth backend answered ${url} with something that is not an OpenID configuration`,
      );
    }
    return body as Record<string, unknown>;
  }

  /** The scopes the auth backend supports, or undefined when it cannot be asked. */
  async scopesSupported(): Promise<string[] | undefined> {
    try {
      const scopes = (await this.configuration()).scopes_supported;
      return Array.isArray(scopes) && scopes.every(s => typeof s === 'string')
        ? (scopes as string[])
        : undefined;
    } catch (error) {
      if (error instanceof AuthorizationServerUnavailableError) return undefined;
      throw error;
    }
  }
}
