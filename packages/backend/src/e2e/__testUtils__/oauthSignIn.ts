/*
 * What the broker's OAuth end-to-end tests need around the official SDK clients' own OAuth
 * support (`auth()` behind the streamable HTTP transports of SDK 1.x and the SDK v2 client):
 * - InMemoryOAuthProvider: an OAuthClientProvider that keeps what an IDE would keep (client
 *   registration, tokens, PKCE verifier, discovery state) and records the authorization URLs the
 *   SDK asks it to open in a browser;
 * - consent(): the person at that browser: it follows the authorization URL to Backstage's consent
 *   page (`<app.baseUrl>/oauth2/authorize/<session>`), reads the session as that page does, and
 *   approves or rejects it through the auth backend's session API with the person's own Backstage
 *   token (the page itself belongs to the app). The answer is the redirect to the client's
 *   callback, carrying the code (or the error) and the state;
 * - recordingFetch(): a fetch for the transports that records every request the SDK makes
 *   (discovery, registration, token, MCP), so a test can show the sequence.
 */
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomBytes } from 'node:crypto';

/** How an {@link InMemoryOAuthProvider}'s client identifies itself to the authorization server. */
export type Registration = 'dcr' | 'cimd';

/** Options of {@link InMemoryOAuthProvider}. */
export interface InMemoryOAuthProviderOptions {
  clientName: string;
  /** The client's callback (never listened on: the test reads the code from the redirect). */
  redirectUrl: string;
  /** Present: the client's metadata document URL (CIMD); absent: dynamic registration. */
  clientMetadataUrl?: string;
}

/** An OAuthClientProvider that keeps everything in memory, as an IDE keeps it in its storage. */
export class InMemoryOAuthProvider implements OAuthClientProvider {
  readonly clientMetadataUrl?: string;
  /** Every URL the SDK asked to open in the browser, in order. */
  readonly authorizationUrls: URL[] = [];
  /** Every state this client put into an authorization request, in order. */
  readonly states: string[] = [];
  /** Replaces the PKCE verifier the SDK saved (to test a wrong one); default none. */
  verifierOverride?: string;
  #clientInformation?: OAuthClientInformationMixed;
  #tokens?: OAuthTokens;
  #codeVerifier?: string;
  #discoveryState?: OAuthDiscoveryState;
  readonly #options: InMemoryOAuthProviderOptions;

  constructor(options: InMemoryOAuthProviderOptions) {
    this.#options = options;
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#options.clientName,
      redirect_uris: [this.#options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  /** The registration this client uses. */
  get registration(): Registration {
    return this.clientMetadataUrl === undefined ? 'dcr' : 'cimd';
  }

  /** The newest authorization URL (fails the test when there is none). */
  get lastAuthorizationUrl(): URL {
    const url = this.authorizationUrls.at(-1);
    if (url === undefined) throw new Error('the SDK asked for no authorization');
    return url;
  }

  state(): string {
    const state = randomBytes(16).toString('base64url');
    this.states.push(state);
    return state;
  }

  clientInformation() {
    return this.#clientInformation;
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed) {
    this.#clientInformation = clientInformation;
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL) {
    this.authorizationUrls.push(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string) {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifierOverride !== undefined) return this.verifierOverride;
    if (this.#codeVerifier === undefined) throw new Error('no PKCE verifier saved');
    return this.#codeVerifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discoveryState = state;
  }

  discoveryState() {
    return this.#discoveryState;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.#clientInformation = undefined;
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.#codeVerifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discoveryState = undefined;
  }
}

/** What the person's consent step saw and produced. */
export interface ConsentOutcome {
  /** The consent session as Backstage's consent page reads it. */
  session: {
    id: string;
    clientId: string;
    clientName: string;
    scope?: string;
    redirectUri: string;
  };
  /** Where the browser goes next: the client's callback with `code` (or `error`) and `state`. */
  redirect: URL;
}

/**
 * The person at the browser: opens `authorizationUrl` (Backstage's authorize endpoint), lands on
 * the app's consent page for the new session, and approves or rejects it as the user whose
 * Backstage token is `userToken`.
 */
export async function consent(
  backendBaseUrl: string,
  authorizationUrl: URL,
  userToken: string,
  decision: 'approve' | 'reject' = 'approve',
): Promise<ConsentOutcome> {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || location === null) {
    throw new Error(
      `authorize answered ${authorize.status} (no consent page): ${await authorize.text()}`,
    );
  }
  const sessionId = /\/oauth2\/authorize\/([^/?#]+)$/.exec(new URL(location).pathname)?.[1];
  if (sessionId === undefined) throw new Error(`authorize redirected elsewhere: ${location}`);
  const sessionUrl = `${backendBaseUrl}/api/auth/v1/sessions/${sessionId}`;
  const session = await fetch(sessionUrl);
  if (!session.ok) throw new Error(`consent session ${session.status}: ${await session.text()}`);
  const decided = await fetch(`${sessionUrl}/${decision}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${userToken}` },
  });
  if (!decided.ok)
    throw new Error(`${decision} answered ${decided.status}: ${await decided.text()}`);
  const { redirectUrl } = (await decided.json()) as { redirectUrl: string };
  return {
    session: (await session.json()) as ConsentOutcome['session'],
    redirect: new URL(redirectUrl),
  };
}

/** One request an SDK client made. */
export interface RecordedRequest {
  method: string;
  url: string;
  status: number;
  /** The request's `Authorization` header (token values are compared, never printed). */
  authorization?: string;
  /** The answer's `WWW-Authenticate` header. */
  wwwAuthenticate?: string;
  /** For form posts (the token endpoint): the `grant_type`. */
  grantType?: string;
}

/** A fetch for the SDK transports that records every request it sends. */
export function recordingFetch(): { fetch: FetchLike; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  return {
    requests,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      const headers = new Headers(init?.headers);
      const body = typeof init?.body === 'string' ? init.body : init?.body?.toString();
      const grantType =
        init?.body instanceof URLSearchParams
          ? (init.body.get('grant_type') ?? undefined)
          : /(?:^|&)grant_type=([^&]+)/.exec(body ?? '')?.[1];
      requests.push({
        method: init?.method ?? 'GET',
        url: String(url),
        status: response.status,
        authorization: headers.get('authorization') ?? undefined,
        wwwAuthenticate: response.headers.get('www-authenticate') ?? undefined,
        grantType,
      });
      return response;
    },
  };
}

/** The claims of a JWT (read only, for assertions about who a token names). */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}
