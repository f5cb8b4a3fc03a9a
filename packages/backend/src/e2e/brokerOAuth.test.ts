/*
 * MCP clients signing in through Backstage (spec §10), end to end: the real development backend
 * process — Backstage's auth plugin as the OAuth 2.1 / OIDC authorization server (the development
 * config: client ID metadata documents, dynamic registration, refresh tokens), the real RBAC
 * plugin with the fixture policy, and the broker — driven by the official SDK clients' own OAuth
 * support: SDK 1.x (2025-11-25, sessions) and the SDK v2 client pinned to 2026-07-28.
 *
 * The person is played by `consent()`: it opens the authorization URL the SDK hands its provider
 * as a browser would, and approves (or rejects) the consent through the auth backend's session
 * API with the person's own Backstage sign-in token; the consent page itself is the app's. The
 * client ID metadata documents are served by this test over HTTPS on loopback. The one stand-in:
 * the backend's wall clock is moved forward (advancingClock) so that access tokens expire
 * without waiting an hour.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exchangeAuthorization, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernClientTransport,
} from '@modelcontextprotocol/client';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { LEGACY_INITIALIZE_REQUEST, mcpRawPost } from '../testing/mcpRawPost';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { connectBrokerClient, toolCallAuditLines, waitFor } from './brokerTestKit';
import {
  ClientMetadataDocuments,
  serveClientMetadataDocuments,
} from './__testUtils__/clientMetadataDocuments';
import { MODERN_PROTOCOL_VERSION, postModernRequest } from './__testUtils__/modernBrokerClient';
import {
  consent,
  ConsentOutcome,
  InMemoryOAuthProvider,
  jwtClaims,
  recordingFetch,
  RecordedRequest,
  Registration,
} from './__testUtils__/oauthSignIn';
import type { Era } from './__testUtils__/eraClients';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** A little over the access token's lifetime (Backstage's default, one hour). */
const PAST_TOKEN_EXPIRY_MS = 61 * 60_000;
/** Loopback callback of the test's clients (never listened on: the code is read off the redirect). */
const CALLBACK = 'http://127.0.0.1:33418/callback';

/** An MCP client of either era, connected to the broker with its OAuth provider. */
interface OAuthBrokerClient {
  toolNames(): Promise<string[]>;
  echo(message: string): Promise<string>;
  /** The legacy session id (undefined for 2026-07-28, which has none). */
  sessionId(): string | undefined;
  close(): Promise<void>;
}

/** One signed-in client of the main flows, kept for the refresh and revocation tests. */
interface SignedIn {
  era: Era;
  provider: InMemoryOAuthProvider;
  requests: RecordedRequest[];
  fetch: FetchLike;
  client: OAuthBrokerClient;
  consented: ConsentOutcome;
}

function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content;
  return content?.find(c => c.type === 'text')?.text ?? '';
}

/** `METHOD path status` of each recorded request, for comparing sequences. */
function steps(requests: RecordedRequest[]): string[] {
  return requests.map(r => `${r.method} ${new URL(r.url).pathname} ${r.status}`);
}

describe('MCP clients sign in through Backstage (real backend, real auth plugin, SDK clients)', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let documents: ClientMetadataDocuments;
  const tokens: Record<string, string> = {};
  const signedIn = new Map<string, SignedIn>();
  const closers: Array<() => Promise<unknown>> = [];
  let aliceTools: string[];

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;
  const metadataUrl = () =>
    `${backend.baseUrl}/.well-known/oauth-protected-resource/api/mcp-broker/mcp`;

  /** Connects a client of `era` with `provider` (throws what the SDK throws). */
  async function connect(
    era: Era,
    provider: InMemoryOAuthProvider,
    fetch: FetchLike,
  ): Promise<OAuthBrokerClient> {
    if (era === 'legacy') {
      const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), {
        authProvider: provider,
        fetch,
      });
      const client = new Client({ name: 'oauth-e2e', version: '1.0.0' }, { capabilities: {} });
      await client.connect(transport);
      closers.push(() => client.close());
      return {
        toolNames: async () => (await client.listTools()).tools.map(t => t.name).sort(),
        echo: async message =>
          firstText(await client.callTool({ name: 'example_echo', arguments: { message } })),
        sessionId: () => transport.sessionId,
        close: () => client.close(),
      };
    }
    const client = new ModernClient(
      { name: 'oauth-e2e-modern', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } },
    );
    await client.connect(
      new ModernClientTransport(new URL(mcpUrl()), { authProvider: provider, fetch }),
    );
    closers.push(() => client.close());
    return {
      toolNames: async () => (await client.listTools()).tools.map(t => t.name).sort(),
      echo: async message =>
        firstText(await client.callTool({ name: 'example_echo', arguments: { message } })),
      sessionId: () => undefined,
      close: () => client.close(),
    };
  }

  /** The SDK's own code exchange after the person's consent (`finishAuth` of the transport). */
  async function finishAuth(
    era: Era,
    provider: InMemoryOAuthProvider,
    fetch: FetchLike,
    redirect: URL,
  ): Promise<void> {
    if (era === 'legacy') {
      const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), {
        authProvider: provider,
        fetch,
      });
      await transport.finishAuth(redirect.searchParams.get('code') ?? '');
      return;
    }
    const transport = new ModernClientTransport(new URL(mcpUrl()), {
      authProvider: provider,
      fetch,
    });
    await transport.finishAuth(redirect.searchParams);
  }

  /** The first connect of a new client: it must end in the SDK asking for the browser. */
  async function connectUntilAuthorization(
    era: Era,
    provider: InMemoryOAuthProvider,
    fetch: FetchLike,
  ): Promise<void> {
    const before = provider.authorizationUrls.length;
    const error = await connect(era, provider, fetch).then(
      () => undefined,
      (e: Error) => e,
    );
    // SDK 1.x's UnauthorizedError keeps the name "Error"; the v2 client's is named.
    if (!(error instanceof UnauthorizedError) && error?.name !== 'UnauthorizedError') {
      throw error ?? new Error('connected without being asked to authorize');
    }
    expect(provider.authorizationUrls).toHaveLength(before + 1);
  }

  /** A provider for a new client: registered dynamically, or by a published metadata document. */
  function newProvider(
    name: string,
    registration: Registration,
    redirectUrl = CALLBACK,
  ): InMemoryOAuthProvider {
    const clientName = `OAuth e2e ${name}`;
    if (registration === 'dcr') return new InMemoryOAuthProvider({ clientName, redirectUrl });
    const clientMetadataUrl = documents.publish(name, {
      client_name: clientName,
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    return new InMemoryOAuthProvider({ clientName, redirectUrl, clientMetadataUrl });
  }

  /** The whole sign-in as `user`: connect → 401 → … → consent → code → token → connected. */
  async function signIn(era: Era, provider: InMemoryOAuthProvider, user: string) {
    const { fetch, requests } = recordingFetch();
    await connectUntilAuthorization(era, provider, fetch);
    const consented = await consent(backend.baseUrl, provider.lastAuthorizationUrl, tokens[user]);
    expect(consented.redirect.searchParams.get('state')).toBe(provider.states.at(-1));
    await finishAuth(era, provider, fetch, consented.redirect);
    return { fetch, requests, consented };
  }

  beforeAll(async () => {
    [example, documents] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      serveClientMetadataDocuments(),
    ]);
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [{ name: 'example', url: example.url }],
          // A legacy session outlives the clock jump: a refreshed token keeps the same session.
          sessionIdleTimeout: { hours: 4 },
        },
      },
      // Info level: the auditor's tool-call events are printed. The backend trusts the test's
      // certificate when it fetches a client metadata document.
      env: { LOG_LEVEL: 'info', NODE_EXTRA_CA_CERTS: documents.certificateFile },
      advancingClock: true,
    });
    for (const user of ['alice', 'erin']) tokens[user] = await backend.signIn(user);
    const alice = await connectBrokerClient(backend.baseUrl, tokens.alice);
    closers.push(() => alice.close());
    aliceTools = (await waitFor(
      async () => {
        const names = (await alice.client.listTools()).tools.map(t => t.name).sort();
        return names.includes('example_echo') ? names : undefined;
      },
      30_000,
      'the example server to be listed',
    ))!;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(closers.map(close => close().catch(() => {})));
    await backend?.stop();
    await Promise.all([example?.close(), documents?.close()]);
  }, 30_000);

  it('answers every unauthenticated request of both eras with the challenge, and serves the documents it leads to', async () => {
    const challenge = `Bearer resource_metadata="${metadataUrl()}"`;
    const refused = `Bearer error="invalid_token", error_description="The access token is invalid or has expired", resource_metadata="${metadataUrl()}"`;
    const answers = await Promise.all([
      mcpRawPost(mcpUrl(), '', LEGACY_INITIALIZE_REQUEST),
      postModernRequest(backend.baseUrl, '', 1, 'server/discover', {}),
      fetch(mcpUrl(), { headers: { Accept: 'text/event-stream' } }),
      fetch(mcpUrl(), { method: 'DELETE' }),
      mcpRawPost(mcpUrl(), 'not-a-token', LEGACY_INITIALIZE_REQUEST),
      postModernRequest(backend.baseUrl, `${tokens.alice}x`, 1, 'tools/list', {}),
      // A valid token in the query string is never read.
      fetch(`${mcpUrl()}?access_token=${tokens.alice}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(LEGACY_INITIALIZE_REQUEST),
      }),
    ]);
    expect(answers.map(a => a.status)).toEqual(answers.map(() => 401));
    expect(answers.map(a => a.headers.get('www-authenticate'))).toEqual([
      challenge,
      challenge,
      challenge,
      challenge,
      refused,
      refused,
      challenge,
    ]);
    const bodies = await Promise.all(answers.map(a => a.json()));
    for (const body of bodies) {
      expect(body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringMatching(/^Unauthorized: /) },
      });
    }
    expect(bodies[6].error.message).toMatch(
      /a token in the URL \(access_token\) is never accepted/,
    );

    // The metadata names Backstage's auth backend; its documents at the origin root are
    // Backstage's own configuration, byte for byte the same as the auth plugin's.
    const metadata = await fetch(metadataUrl());
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
    expect(await metadata.json()).toEqual({
      resource: mcpUrl(),
      authorization_servers: [`${backend.baseUrl}/api/auth`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'offline_access'],
      resource_name: 'Backstage MCP broker',
    });
    const own = await (
      await fetch(`${backend.baseUrl}/api/auth/.well-known/openid-configuration`)
    ).json();
    expect(own).toMatchObject({
      issuer: `${backend.baseUrl}/api/auth`,
      registration_endpoint: `${backend.baseUrl}/api/auth/v1/register`,
      client_id_metadata_document_supported: true,
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
    for (const path of [
      '/.well-known/oauth-authorization-server/api/auth',
      '/.well-known/openid-configuration/api/auth',
    ]) {
      const document = await fetch(`${backend.baseUrl}${path}`);
      expect(document.status).toBe(200);
      expect(await document.json()).toEqual(own);
    }
    // The same resource metadata under the plugin (what the challenge names when another plugin
    // holds the origin root).
    const local = await fetch(
      `${backend.baseUrl}/api/mcp-broker/.well-known/oauth-protected-resource/mcp`,
    );
    expect(await local.json()).toMatchObject({ resource: mcpUrl() });
  });

  describe.each([
    ['legacy', 'dcr'],
    ['legacy', 'cimd'],
    ['modern', 'dcr'],
    ['modern', 'cimd'],
  ] as Array<[Era, Registration]>)('a %s-era client registered by %s', (era, registration) => {
    const key = `${era}-${registration}`;

    it('signs alice in with PKCE and her consent, then lists exactly her tools and calls one, audited as alice', async () => {
      const provider = newProvider(key, registration);
      const { fetch, requests, consented } = await signIn(era, provider, 'alice');

      // unauthenticated → challenge → metadata → (registration) → browser.
      expect(steps(requests).slice(0, registration === 'dcr' ? 4 : 3)).toEqual([
        'POST /api/mcp-broker/mcp 401',
        'GET /.well-known/oauth-protected-resource/api/mcp-broker/mcp 200',
        'GET /.well-known/oauth-authorization-server/api/auth 200',
        ...(registration === 'dcr' ? ['POST /api/auth/v1/register 201'] : []),
      ]);
      expect(requests[0].wwwAuthenticate).toBe(`Bearer resource_metadata="${metadataUrl()}"`);
      const authorization = provider.lastAuthorizationUrl;
      expect(`${authorization.origin}${authorization.pathname}`).toBe(
        `${backend.baseUrl}/api/auth/v1/authorize`,
      );
      // The client id: its metadata document's URL (fetched by Backstage), or the registered id.
      const clientId = provider.clientInformation()?.client_id;
      const registeredId = expect.stringMatching(/^[0-9a-f-]{36}$/);
      const expectedClient =
        registration === 'cimd'
          ? { clientId: provider.clientMetadataUrl, documentFetched: true }
          : { clientId: registeredId, documentFetched: false };
      expect({ clientId, documentFetched: documents.fetches(key) > 0 }).toEqual(expectedClient);
      expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: CALLBACK,
        code_challenge_method: 'S256',
        code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        // Sent by the SDK (RFC 8707); Backstage ignores it (see the README's security notes).
        resource: mcpUrl(),
      });
      expect(authorization.searchParams.get('scope')?.split(' ')).toContain('offline_access');
      // What the consent page shows the person: who asks.
      expect(consented.session).toMatchObject({
        clientId,
        clientName: `OAuth e2e ${key}`,
        redirectUri: CALLBACK,
      });

      // code → token: a Backstage user token for alice, and a refresh token.
      const exchanged = requests.filter(r => r.grantType === 'authorization_code');
      expect(steps(exchanged)).toEqual(['POST /api/auth/v1/token 200']);
      const saved = provider.tokens();
      expect(saved?.refresh_token).toEqual(expect.any(String));
      expect(jwtClaims(saved!.access_token)).toMatchObject({
        sub: 'user:default/alice',
        aud: 'backstage',
        iss: `${backend.baseUrl}/api/auth`,
      });

      const client = await connect(era, provider, fetch);
      expect(requests.at(-1)?.authorization).toBe(`Bearer ${saved!.access_token}`);
      expect(await client.toolNames()).toEqual(aliceTools);
      const aliceEchoes = () =>
        toolCallAuditLines(backend.output()).filter(
          line =>
            line.principal === 'user:default/alice' &&
            line.tool === 'echo' &&
            line.status === 'succeeded',
        ).length;
      const auditedBefore = aliceEchoes();
      expect(await client.echo(`hello from ${key}`)).toContain(`hello from ${key}`);
      await waitFor(() => aliceEchoes() > auditedBefore, 10_000, "alice's audit event");
      signedIn.set(key, { era, provider, requests, fetch, client, consented });
    }, 60_000);
  });

  it('cannot tell a token issued to a registered client from a sign-in token, nor which client it was issued to (why there is no mcpBroker.allowedClients)', () => {
    // What a resource server can read of a token: its JOSE header and its claims. Backstage
    // 1.55's OIDC server issues {sub} through the same token issuer as sign-in (OidcService
    // exchangeCodeForToken; refreshes likewise), and `ent` is omitted from both by default
    // (auth.omitIdentityTokenOwnershipClaim): no client_id, azp, cid or jti to tell them apart.
    const shape = (token: string) => {
      const [header] = token.split('.');
      return {
        header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')).typ,
        claims: Object.keys(jwtClaims(token)).sort(),
      };
    };
    const signInShape = shape(tokens.alice);
    expect(signInShape).toEqual({
      header: 'vnd.backstage.user',
      claims: ['aud', 'exp', 'iat', 'iss', 'sub', 'uip'],
    });
    expect(signedIn.size).toBe(4);
    for (const [key, { provider }] of signedIn) {
      expect({ key, ...shape(provider.tokens()!.access_token) }).toEqual({ key, ...signInShape });
    }
  });

  it('refuses erin at initialize and at every 2026-07-28 request: 403, naming mcp-broker.session.create', async () => {
    for (const era of ['legacy', 'modern'] as Era[]) {
      const provider = newProvider(`erin-${era}`, 'cimd');
      const { fetch } = await signIn(era, provider, 'erin');
      expect(jwtClaims(provider.tokens()!.access_token).sub).toBe('user:default/erin');
      const refused = await connect(era, provider, fetch).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(refused?.message).toMatch(/403|Forbidden/);
      // What the SDKs do not show: the answer names the permission.
      const token = provider.tokens()!.access_token;
      const answer =
        era === 'legacy'
          ? await mcpRawPost(mcpUrl(), token, LEGACY_INITIALIZE_REQUEST)
          : await postModernRequest(backend.baseUrl, token, 1, 'server/discover', {});
      expect(answer.status).toBe(403);
      expect((await answer.json()).error.message).toContain('mcp-broker.session.create');
    }
  }, 60_000);

  it('refuses a wrong PKCE verifier, and exchanges the same code with the right one', async () => {
    const provider = newProvider('wrong-verifier', 'dcr');
    const { fetch, requests } = recordingFetch();
    await connectUntilAuthorization('legacy', provider, fetch);
    const { redirect } = await consent(
      backend.baseUrl,
      provider.lastAuthorizationUrl,
      tokens.alice,
    );
    provider.verifierOverride = 'w'.repeat(43);
    await expect(finishAuth('legacy', provider, fetch, redirect)).rejects.toThrow(
      /Invalid code verifier/,
    );
    expect(provider.tokens()).toBeUndefined();
    expect(steps(requests.filter(r => r.grantType === 'authorization_code'))).toContain(
      'POST /api/auth/v1/token 400',
    );
    provider.verifierOverride = undefined;
    await finishAuth('legacy', provider, fetch, redirect);
    expect(jwtClaims(provider.tokens()!.access_token).sub).toBe('user:default/alice');
  }, 60_000);

  it('refuses a code used once already', async () => {
    const { provider, consented } = signedIn.get('legacy-dcr')!;
    const state = provider.discoveryState()!;
    const reuse = exchangeAuthorization(state.authorizationServerUrl, {
      metadata: state.authorizationServerMetadata,
      clientInformation: provider.clientInformation()!,
      authorizationCode: consented.redirect.searchParams.get('code')!,
      codeVerifier: provider.codeVerifier(),
      redirectUri: CALLBACK,
    });
    await expect(reuse).rejects.toThrow(/Authorization code already used/);
  });

  it('refuses a redirect URI outside the allowed patterns, at registration and at authorization', async () => {
    const evil = 'https://evil.example/callback';
    // Dynamic registration: refused at once, nothing to authorize.
    const registered = newProvider('evil-dcr', 'dcr', evil);
    const { fetch, requests } = recordingFetch();
    const refused = await connect('legacy', registered, fetch).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(refused?.message).toMatch(/Invalid redirect_uri/);
    expect(steps(requests)).toContain('POST /api/auth/v1/register 400');
    expect(registered.authorizationUrls).toEqual([]);
    // A metadata document listing it: the authorization endpoint refuses, no consent session.
    const described = newProvider('evil-cimd', 'cimd', evil);
    await connectUntilAuthorization('modern', described, recordingFetch().fetch);
    await expect(
      consent(backend.baseUrl, described.lastAuthorizationUrl, tokens.alice),
    ).rejects.toThrow(/authorize answered 400[^]*Invalid redirect_uri/);
  }, 60_000);

  it('gives a client nothing when the person rejects the consent', async () => {
    const provider = newProvider('rejected', 'cimd');
    const { fetch } = recordingFetch();
    await connectUntilAuthorization('modern', provider, fetch);
    const { redirect } = await consent(
      backend.baseUrl,
      provider.lastAuthorizationUrl,
      tokens.alice,
      'reject',
    );
    expect(Object.fromEntries(redirect.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'User denied the request',
      state: provider.states.at(-1),
    });
    await expect(finishAuth('modern', provider, fetch, redirect)).rejects.toThrow(
      /User denied the request/,
    );
    expect(provider.tokens()).toBeUndefined();
    await connectUntilAuthorization('modern', provider, fetch);
  }, 60_000);

  it('keeps a session going past its access token with the refresh token, and ends one whose refresh token was revoked', async () => {
    const kept = ['legacy-dcr', 'modern-cimd'].map(key => signedIn.get(key)!);
    const revoked = ['legacy-cimd', 'modern-dcr'].map(key => signedIn.get(key)!);
    // The IDE signs out: RFC 7009 revocation of its refresh token (DCR clients authenticate with
    // their secret, metadata-document clients are public).
    for (const { provider } of revoked) {
      const state = provider.discoveryState()!;
      const information = provider.clientInformation()!;
      const form = new URLSearchParams({
        token: provider.tokens()!.refresh_token!,
        token_type_hint: 'refresh_token',
        client_id: information.client_id,
      });
      if (information.client_secret !== undefined) {
        form.set('client_secret', information.client_secret);
      }
      const { revocation_endpoint: endpoint } = state.authorizationServerMetadata as {
        revocation_endpoint: string;
      };
      const revocation = await fetch(endpoint, { method: 'POST', body: form });
      expect(revocation.status).toBe(200);
    }
    const sessionIds = kept.map(k => k.client.sessionId());
    const oldTokens = [...kept, ...revoked].map(s => s.provider.tokens()!.access_token);

    await backend.advanceClock(PAST_TOKEN_EXPIRY_MS);

    // Every access token issued before has expired: 401 with the challenge, never a 500.
    for (const token of oldTokens) {
      const answer = await postModernRequest(backend.baseUrl, token, 1, 'tools/list', {});
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    }
    // A client with its refresh token goes on: 401 → refresh → the same request again.
    for (const [i, { client, requests, provider }] of kept.entries()) {
      const before = requests.length;
      // A tool call (lists may be answered from the v2 client's cache for their ttlMs).
      expect(await client.echo('after the expiry')).toContain('after the expiry');
      expect(steps(requests.slice(before))).toEqual([
        'POST /api/mcp-broker/mcp 401',
        'POST /api/auth/v1/token 200',
        'POST /api/mcp-broker/mcp 200',
      ]);
      expect(requests[before].wwwAuthenticate).toMatch(/^Bearer error="invalid_token"/);
      expect(requests[before + 1].grantType).toBe('refresh_token');
      const fresh = provider.tokens()!.access_token;
      expect(fresh).not.toBe(oldTokens[i]);
      expect(jwtClaims(fresh).sub).toBe('user:default/alice');
      expect(client.sessionId()).toBe(sessionIds[i]);
    }
    // A client whose refresh token was revoked is back to the person: the SDK asks for the
    // browser again (the v2 client says why on the console).
    const warnings = jest.spyOn(console, 'warn').mockImplementation(() => {});
    for (const { client, requests, provider } of revoked) {
      const before = requests.length;
      const asked = provider.authorizationUrls.length;
      await expect(client.echo('after the revocation')).rejects.toThrow();
      expect(steps(requests.slice(before, before + 2))).toEqual([
        'POST /api/mcp-broker/mcp 401',
        'POST /api/auth/v1/token 400',
      ]);
      expect(requests[before + 1].grantType).toBe('refresh_token');
      expect(provider.authorizationUrls).toHaveLength(asked + 1);
      expect(provider.tokens()).toBeUndefined();
    }
    expect(warnings).toHaveBeenCalledWith(
      expect.stringMatching(/invalid_grant.*Invalid refresh token/),
    );
    warnings.mockRestore();
  }, 60_000);
});
