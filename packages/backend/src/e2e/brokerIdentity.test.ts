/*
 * Each person's own identity at the backends (spec §11), end to end on the real development
 * backend (real auth, catalog, RBAC, Backstage's own MCP server) with real MCP servers:
 * - `whoami` / `whoami-modern` (2025-11-25 / 2026-07-28 servers) in `tokenExchange` mode against
 *   the RFC 8693 server of our test packages: alice and carol arrive with their own exchanged
 *   tokens (`sub` theirs, `aud` the backend's), renewed before they expire;
 * - `keys` / `keys-modern` in `userCredential` mode: the URL-elicitation round trip in both eras
 *   through the broker's page, with a credential really stored (and refused when revoked);
 * - `backstage`: Backstage's own MCP server (mcp-actions) in `backstage` mode, behind a recording
 *   front: alice and carol get different answers from the same tool;
 * and, across all of it, no request to any backend carries a client's own token, and a person's
 * request carries no credential of the broker's under any header name (each server also has a
 * broker key under a name of its own, a tenant header marked as not a credential, and `keys` a
 * URL with user info): only the marked header goes along (spec §11.1).
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  startTokenExchangeServer,
  startWhoamiServer,
  type TokenExchangeServer,
  type WhoamiServer,
} from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { RecordingProxy, startRecordingProxy } from '../testing/recordingProxy';
import {
  brokerStatus,
  toolCallAuditLines,
  waitFor,
  waitForBrokerBackends,
  waitForElicitationComplete,
} from './brokerTestKit';
import { connectModernClient } from './__testUtils__/modernBrokerClient';

const BROKER_TOKEN = 'broker-own-token';
/** A broker credential under a header name the broker cannot recognise as one. */
const BROKER_KEY = 'broker-key-secret';
/** The URL user info of the `keys` server (the broker's own Basic credential). */
const BROKER_USERINFO = 'broker:userinfo-secret';
/** The header every server has that the admin marked as not a credential. */
const TENANT = { header: 'X-Tenant', value: 'acme' };
/** The static headers of each server besides its Authorization, and their marking. */
const EXTRA_STATIC = {
  headers: { 'X-Broker-Key': BROKER_KEY, [TENANT.header]: TENANT.value },
  nonCredentialHeaders: [TENANT.header],
};
const PERSONAL_METHODS = ['tools/call', 'prompts/get', 'resources/read', 'completion/complete'];
const URL_ELICITATION = { elicitation: { url: {}, form: {} } };

interface WhoamiReport {
  principal: string;
  credential: string;
  sub?: string;
  aud?: string;
  act?: { sub: string };
  jti?: string;
}

const reportOf = (result: any): WhoamiReport => JSON.parse(result.content[0].text);

describe('each person’s own identity at the backends (spec §11)', () => {
  let backend: BackendProcess;
  let sts: TokenExchangeServer;
  let whoami: WhoamiServer;
  let whoamiModern: WhoamiServer;
  let keys: WhoamiServer;
  let keysModern: WhoamiServer;
  let actionsFront: RecordingProxy;
  const apiKeyOwners: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const clients: Array<{ close(): Promise<unknown> }> = [];

  beforeAll(async () => {
    sts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'exchange-secret' },
      trustedIssuers: [],
      allowedTargets: ['whoami'],
    });
    const jwt = { jwksUrl: sts.jwksUrl, issuer: sts.issuer, audience: 'whoami' };
    whoami = await startWhoamiServer({ era: 'legacy', brokerToken: BROKER_TOKEN, jwt });
    whoamiModern = await startWhoamiServer({ era: 'modern', brokerToken: BROKER_TOKEN, jwt });
    keys = await startWhoamiServer({
      era: 'legacy',
      brokerToken: BROKER_TOKEN,
      apiKeys: { header: 'X-Api-Key', owners: apiKeyOwners },
    });
    keysModern = await startWhoamiServer({
      era: 'modern',
      brokerToken: BROKER_TOKEN,
      apiKeys: { header: 'Authorization', prefix: 'Bearer ', owners: apiKeyOwners },
    });
    actionsFront = await startRecordingProxy();
    const exchange = {
      mode: 'tokenExchange',
      tokenEndpoint: sts.tokenEndpoint,
      clientId: 'mcp-broker',
      clientSecret: 'exchange-secret',
      audience: 'whoami',
    };
    const own = { Authorization: `Bearer ${BROKER_TOKEN}`, ...EXTRA_STATIC.headers };
    const marked = { nonCredentialHeaders: EXTRA_STATIC.nonCredentialHeaders };
    const keysUrl = new URL(keys.url);
    [keysUrl.username, keysUrl.password] = BROKER_USERINFO.split(':');
    backend = await startBackendProcess({
      config: baseUrl => {
        actionsFront.target = new URL(baseUrl);
        sts.trust({
          issuer: `${baseUrl}/api/mcp-broker`,
          jwksUrl: `${baseUrl}/api/mcp-broker/.well-known/jwks.json`,
        });
        return {
          mcpBroker: {
            credentialEncryptionKey: randomBytes(32).toString('base64'),
            servers: [
              { name: 'whoami', url: whoami.url, headers: own, ...marked, auth: exchange },
              {
                name: 'whoami-modern',
                url: whoamiModern.url,
                headers: own,
                ...marked,
                auth: exchange,
              },
              {
                name: 'keys',
                url: keysUrl.toString(),
                headers: own,
                ...marked,
                auth: { mode: 'userCredential', header: 'X-Api-Key', description: 'an API key' },
              },
              {
                name: 'keys-modern',
                url: keysModern.url,
                headers: own,
                ...marked,
                auth: { mode: 'userCredential' },
              },
              {
                name: 'backstage',
                url: `${actionsFront.baseUrl}/api/mcp-actions/v1`,
                headers: {
                  Authorization: 'Bearer dev-only-static-token-0123456789',
                  ...EXTRA_STATIC.headers,
                },
                ...marked,
                auth: { mode: 'backstage', targetPluginId: 'mcp-actions' },
              },
            ],
          },
        };
      },
      env: { LOG_LEVEL: 'info' },
      startTimeoutMs: 150_000,
    });
    for (const user of ['alice', 'carol', 'bob', 'dave']) tokens[user] = await backend.signIn(user);
    await waitForBrokerBackends(
      backend.baseUrl,
      tokens.carol,
      b => b.state === 'connected' && b.counts.tools > 0,
      'the broker to list every server',
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close().catch(() => {})));
    await backend?.stop();
    await Promise.all(
      [sts, whoami, whoamiModern, keys, keysModern, actionsFront].map(s => s?.close()),
    );
  }, 30_000);

  async function legacyClient(user: string, capabilities: Record<string, unknown> = {}) {
    const client = new Client({ name: 'identity-e2e', version: '1.0.0' }, { capabilities });
    const notifications: Array<{ method: string; params?: any }> = [];
    client.fallbackNotificationHandler = async n => {
      notifications.push(n);
    };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens[user]}` } },
      }),
    );
    clients.push(client);
    return { client, notifications };
  }

  async function modernClient(user: string, capabilities: Record<string, unknown> = {}) {
    const client = await connectModernClient(backend.baseUrl, tokens[user], capabilities);
    clients.push(client);
    return client;
  }

  /** The Backstage sign-in cookie for `user` (what the Backstage app sets for this host). */
  async function signInCookie(user: string): Promise<string> {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/.backstage/auth/v1/cookie`, {
      headers: { Authorization: `Bearer ${tokens[user]}` },
    });
    expect(response.status).toBe(200);
    const cookie = /backstage-auth=[^;]+/.exec(response.headers.get('set-cookie') ?? '')?.[0];
    expect(cookie).toBeDefined();
    return cookie!;
  }

  /** What a person does on the broker's page: open it, then store the credential. */
  async function storeOnPage(user: string, url: string, value: string) {
    const cookie = await signInCookie(user);
    const page = await fetch(url, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    const credential = /data-credential="([^"]+)"/.exec(html)![1];
    const elicitationId = /data-elicitation="([^"]+)"/.exec(html)?.[1];
    const stored = await fetch(new URL(credential, backend.baseUrl), {
      method: 'PUT',
      headers: { Cookie: cookie, Origin: backend.baseUrl, 'Content-Type': 'application/json' },
      body: JSON.stringify({ value, ...(elicitationId ? { elicitationId } : {}) }),
    });
    expect(stored.status).toBe(200);
    return { html, elicitationId };
  }

  it('brings alice and carol to a backend with their own exchanged tokens, in both eras on both sides', async () => {
    const legacyAlice = await legacyClient('alice');
    const legacyCarol = await legacyClient('carol');
    const modernAlice = await modernClient('alice');
    for (const [user, call] of [
      ['alice', (name: string) => legacyAlice.client.callTool({ name })],
      ['carol', (name: string) => legacyCarol.client.callTool({ name })],
      ['alice', (name: string) => modernAlice.callTool({ name })],
    ] as const) {
      for (const tool of ['whoami_whoami', 'whoami-modern_whoami']) {
        const report = reportOf(await call(tool));
        expect(report).toMatchObject({
          credential: 'jwt',
          sub: `user:default/${user}`,
          aud: 'whoami',
          act: { sub: 'mcp-broker' },
        });
      }
    }
    // Each person's token was exchanged once per server and then reused.
    const subjects = sts.exchanges.map(e => e.subject).sort();
    expect(subjects).toEqual([
      'user:default/alice',
      'user:default/alice',
      'user:default/carol',
      'user:default/carol',
    ]);
    // The shared lists still went with the broker's own credential.
    expect(whoami.received.find(r => r.method === 'tools/list')?.authorization).toBe(
      `Bearer ${BROKER_TOKEN}`,
    );
  }, 30_000);

  it('presents the person’s credential for prompts/get and resources/read too, also to a 2025-11-25 server', async () => {
    const { client } = await legacyClient('carol');
    const prompt = await client.getPrompt({ name: 'whoami_whoami' });
    expect(JSON.parse((prompt.messages[0].content as any).text)).toMatchObject({
      sub: 'user:default/carol',
    });
    const resource = await client.readResource({ uri: 'whoami://me' });
    expect(JSON.parse((resource.contents[0] as any).text)).toMatchObject({
      sub: 'user:default/carol',
    });
  });

  it('answers alice and carol differently from Backstage’s own MCP server (their catalog permissions)', async () => {
    const query = { query: {}, fields: ['kind', 'metadata.name'] };
    const kindsOf = async (user: string) => {
      const { client } = await legacyClient(user);
      const result: any = await client.callTool({
        name: 'backstage_catalog.query-catalog-entities',
        arguments: query,
      });
      expect(result.isError).toBeFalsy();
      const items = JSON.parse(result.content[0].text).items as Array<{ kind: string }>;
      return new Set(items.map(i => i.kind));
    };
    const alice = await kindsOf('alice');
    const carol = await kindsOf('carol');
    // Every fixture user reads APIs, components and the organisation; portal-admin reads every
    // entity, the Locations too (examples/rbac-*.{csv,yaml}).
    expect(alice.has('User')).toBe(true);
    expect(alice.has('Location')).toBe(false);
    expect(carol.has('Location')).toBe(true);
    expect(carol.has('User')).toBe(true);
  });

  it('runs the URL-elicitation round trip of a 2025-11-25 client with a real stored credential', async () => {
    apiKeyOwners['alice-key-1'] = 'alice@keys';
    const { client, notifications } = await legacyClient('alice', URL_ELICITATION);
    const error = await client.callTool({ name: 'keys_whoami' }).catch(e => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32042);
    const [elicitation] = error.data.elicitations;
    expect(elicitation).toMatchObject({ mode: 'url', elicitationId: expect.any(String) });
    expect(elicitation.url).toBe(
      `${backend.baseUrl}/api/mcp-broker/connect/keys?elicitationId=${encodeURIComponent(elicitation.elicitationId)}`,
    );
    // Nothing reached the backend with anything of alice's yet.
    expect(keys.received.filter(r => r.method === 'tools/call')).toEqual([]);

    const { html } = await storeOnPage('alice', elicitation.url, 'alice-key-1');
    expect(html).toContain('Your credential for keys');
    expect(html).toContain('an API key');
    await waitForElicitationComplete(notifications, elicitation.elicitationId);
    const report = reportOf(await client.callTool({ name: 'keys_whoami' }));
    expect(report).toEqual({ principal: 'alice@keys', credential: 'api-key' });
    expect(keys.received.filter(r => r.method === 'tools/call').map(r => r.apiKey)).toEqual([
      'alice-key-1',
    ]);
  });

  it('runs the URL-elicitation round trip of a 2026-07-28 client with a real stored credential', async () => {
    apiKeyOwners['carol-key-1'] = 'carol@keys';
    const client = await modernClient('carol', URL_ELICITATION);
    const asked: any[] = [];
    client.setRequestHandler('elicitation/create', async request => {
      asked.push(request.params);
      // The person opens the URL in a browser, signs in and stores the credential.
      await storeOnPage('carol', (request.params as any).url, 'carol-key-1');
      return { action: 'accept' };
    });
    const report = reportOf(await client.callTool({ name: 'keys-modern_whoami' }));
    expect(asked).toEqual([
      {
        mode: 'url',
        url: `${backend.baseUrl}/api/mcp-broker/connect/keys-modern`,
        message: expect.stringContaining('keys-modern acts with your own account'),
      },
    ]);
    expect(report).toEqual({ principal: 'carol@keys', credential: 'api-key' });
    expect(keysModern.received.filter(r => r.method === 'tools/call').map(r => r.apiKey)).toEqual([
      'Bearer carol-key-1',
    ]);
  });

  it('tells a client without URL-mode elicitation where to store the credential, as a tool error', async () => {
    const { client } = await legacyClient('carol', { elicitation: { form: {} } });
    const result: any = await client.callTool({ name: 'keys_whoami' });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(
      new RegExp(
        `keys acts with your own account.* Open ${backend.baseUrl}/api/mcp-broker/connect/keys\\?elicitationId=\\S+ in your browser`,
      ),
    );
  });

  it('answers a personal-mode server’s question with the person’s credential too', async () => {
    const { client } = await legacyClient('alice', { elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
    const before = keys.received.length;
    const result: any = await client.callTool({ name: 'keys_ask' });
    expect(JSON.parse(result.content[0].text)).toEqual({ action: 'accept' });
    const answers = keys.received.slice(before).filter(r => r.response);
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) {
      expect(answer.apiKey).toBe('alice-key-1');
      expect(answer.authorization).toBeUndefined();
    }
  });

  it('keeps credentials to their owner: names and dates only, a foreign link refused, no cross-site writes', async () => {
    const list = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials`, {
      headers: { Authorization: `Bearer ${tokens.alice}` },
    });
    const { items } = await list.json();
    expect(items).toEqual([
      {
        server: 'keys',
        stored: true,
        inUse: true,
        description: 'an API key',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      { server: 'keys-modern', stored: false, inUse: true },
    ]);
    expect(JSON.stringify(items)).not.toContain('alice-key-1');

    // bob follows a link made for alice: the page warns, and completing it is refused.
    const { client } = await legacyClient('alice', URL_ELICITATION);
    await client.callTool({ name: 'keys-modern_whoami' }).catch(() => {});
    const error = await client.callTool({ name: 'keys-modern_whoami' }).catch(e => e);
    const foreign = error.data.elicitations[0];
    const bobCookie = await signInCookie('bob');
    const page = await (await fetch(foreign.url, { headers: { Cookie: bobCookie } })).text();
    expect(page).toContain('This link was made for another person');
    const completed = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials/keys-modern`, {
      method: 'PUT',
      headers: { Cookie: bobCookie, Origin: backend.baseUrl, 'Content-Type': 'application/json' },
      body: JSON.stringify({ value: 'bob-key', elicitationId: foreign.elicitationId }),
    });
    expect(completed.status).toBe(403);

    const crossSite = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials/keys`, {
      method: 'DELETE',
      headers: { Cookie: bobCookie, Origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const signedOut = await fetch(`${backend.baseUrl}/api/mcp-broker/connect/keys`);
    expect(signedOut.status).toBe(401);
    expect(await signedOut.text()).toContain('Sign in first');
  });

  it('changes a stored credential only from the person’s browser: no token, no missing or foreign Origin', async () => {
    const url = `${backend.baseUrl}/api/mcp-broker/credentials/keys-modern`;
    const page = `${backend.baseUrl}/api/mcp-broker/connect/keys-modern`;
    const json = { 'Content-Type': 'application/json' };
    const body = JSON.stringify({ value: 'dave-key' });
    const attempts: Array<[string, RequestInit]> = [
      // alice's token as her IDE got it: refused for writes, whatever else the request carries.
      [
        'PUT',
        {
          headers: { Authorization: `Bearer ${tokens.alice}`, Origin: backend.baseUrl, ...json },
          body,
        },
      ],
      ['DELETE', { headers: { Authorization: `Bearer ${tokens.alice}` } }],
      // The development static token (a service): refused unless allowServiceWrites is on.
      [
        'PUT',
        { headers: { Authorization: 'Bearer dev-only-static-token-0123456789', ...json }, body },
      ],
    ];
    for (const [method, init] of attempts) {
      const refused = await fetch(url, { method, ...init });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.message).toBe(
        `A token cannot change personal credentials (an MCP client holding your token must not swap the credential used on your behalf): store or delete it in your browser at ${page}`,
      );
    }
    const cookie = await signInCookie('dave');
    const noOrigin = await fetch(url, {
      method: 'PUT',
      headers: { Cookie: cookie, ...json },
      body,
    });
    expect(noOrigin.status).toBe(403);
    expect((await noOrigin.json()).error.message).toContain('this request has none');
    const foreign = await fetch(url, {
      method: 'PUT',
      headers: { Cookie: cookie, Origin: 'http://localhost:1', ...json },
      body,
    });
    expect(foreign.status).toBe(403);
    // Nothing was stored by any of them.
    const listed = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials`, {
      headers: { Authorization: `Bearer ${tokens.dave}` },
    });
    expect(listed.status).toBe(200);
    expect((await listed.json()).items).toContainEqual({
      server: 'keys-modern',
      stored: false,
      inUse: true,
    });
    // The app's origin ("My connections") and the broker's own page may.
    const fromApp = await fetch(url, {
      method: 'PUT',
      headers: { Cookie: cookie, Origin: 'http://localhost:3000', ...json },
      body,
    });
    expect(fromApp.status).toBe(200);
    const removed = await fetch(url, {
      method: 'DELETE',
      headers: { Cookie: cookie, Origin: backend.baseUrl },
    });
    expect(removed.status).toBe(204);
  });

  it('makes a backend’s 401 on a personal credential that person’s tool error, leaving the connection and others alone', async () => {
    apiKeyOwners['bob-key-1'] = 'bob@keys';
    const stored = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials/keys`, {
      method: 'PUT',
      headers: {
        Cookie: await signInCookie('bob'),
        Origin: backend.baseUrl,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ value: 'bob-key-1' }),
    });
    expect(stored.status).toBe(200);
    delete apiKeyOwners['alice-key-1']; // alice's key is revoked at the server
    const before = (await brokerStatus(backend.baseUrl, tokens.carol)).backends.find(
      b => b.name === 'keys',
    )!;
    const alice = await legacyClient('alice');
    const refused: any = await alice.client.callTool({ name: 'keys_whoami' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toContain(
      'Your credential for keys was refused (the server answered HTTP 401)',
    );
    expect(refused.content[0].text).toContain(`${backend.baseUrl}/api/mcp-broker/connect/keys`);
    const bob = await legacyClient('bob');
    expect(reportOf(await bob.client.callTool({ name: 'keys_whoami' }))).toEqual({
      principal: 'bob@keys',
      credential: 'api-key',
    });
    const after = (await brokerStatus(backend.baseUrl, tokens.carol)).backends.find(
      b => b.name === 'keys',
    )!;
    expect(after.state).toBe('connected');
    expect(after.lastConnectedAt).toBe(before.lastConnectedAt);
  });

  it('shows each server’s mode on /status, and a failed exchange there and to the person', async () => {
    sts.failNext({ status: 400, error: 'invalid_grant', description: 'account disabled' });
    const { client } = await legacyClient('bob');
    const failed: any = await client.callTool({ name: 'whoami_whoami' });
    expect(failed.isError).toBe(true);
    // The OAuth error code and the broker's own words; never the IdP's free text.
    expect(failed.content[0].text).toContain('was refused: HTTP 400 invalid_grant.');
    expect(failed.content[0].text).not.toContain('account disabled');
    const status = await brokerStatus(backend.baseUrl, tokens.carol);
    const auth = Object.fromEntries(status.backends.map(b => [b.name, (b as any).auth]));
    expect(auth).toEqual({
      whoami: {
        mode: 'tokenExchange',
        tokenEndpoint: sts.tokenEndpoint,
        lastExchangeError: {
          at: expect.any(String),
          message: expect.stringMatching(/was refused: HTTP 400 invalid_grant$/),
        },
      },
      'whoami-modern': { mode: 'tokenExchange', tokenEndpoint: sts.tokenEndpoint },
      keys: { mode: 'userCredential' },
      'keys-modern': { mode: 'userCredential' },
      backstage: { mode: 'backstage', targetPluginId: 'mcp-actions' },
    });
    expect(JSON.stringify(status)).not.toContain('exchange-secret');
    expect(JSON.stringify(status)).not.toContain('account disabled');
    // The next call exchanges again and succeeds.
    expect(reportOf(await client.callTool({ name: 'whoami_whoami' })).sub).toBe('user:default/bob');
  });

  it('renews an exchanged token 30 s before it expires', async () => {
    sts.tokenLifetimeS = 31; // good for one second of reuse
    try {
      // dave has no token for this server yet: his first one is exchanged with this lifetime.
      const client = await modernClient('dave');
      const first = reportOf(await client.callTool({ name: 'whoami-modern_whoami' }));
      const exchanged = sts.exchanges.length;
      // Within its lifetime the token is reused; afterwards a new one is exchanged.
      const renewed = await waitFor(
        async () => {
          const report = reportOf(await client.callTool({ name: 'whoami-modern_whoami' }));
          return report.jti !== first.jti ? report : undefined;
        },
        15_000,
        'a renewed token',
      );
      expect(renewed?.sub).toBe('user:default/dave');
      expect(sts.exchanges.length).toBe(exchanged + 1);
    } finally {
      sts.tokenLifetimeS = 300;
    }
  }, 30_000);

  it('sends no broker credential of any header name (nor URL user info) with a person’s request, in every mode; only the header marked as not a credential', () => {
    const basic = `Basic ${Buffer.from(BROKER_USERINFO).toString('base64')}`;
    const brokerSecrets = [BROKER_TOKEN, BROKER_KEY, 'dev-only-static-token-0123456789', basic];
    const servers = { whoami, whoamiModern, keys, keysModern };
    for (const [name, server] of Object.entries(servers)) {
      const personal = server.received.filter(
        r => PERSONAL_METHODS.includes(r.method ?? '') || r.response,
      );
      expect({ name, personal: personal.length > 0 }).toEqual({ name, personal: true });
      for (const { method, headers } of personal) {
        const values = Object.values(headers).join('\n');
        for (const secret of brokerSecrets) {
          expect({ name, method, leaked: values.includes(secret) }).toEqual({
            name,
            method,
            leaked: false,
          });
        }
        expect({ name, method, tenant: headers['x-tenant'] }).toEqual({
          name,
          method,
          tenant: TENANT.value,
        });
      }
      // The broker's own requests (the shared lists) still carry all of its headers.
      const lists = server.received.find(r => r.method === 'tools/list')!;
      expect(lists.headers).toMatchObject({
        authorization: `Bearer ${BROKER_TOKEN}`,
        'x-broker-key': BROKER_KEY,
        'x-tenant': TENANT.value,
      });
    }
    // The URL's user info never went anywhere as a credential: the broker's own requests to
    // `keys` carry its Bearer token (configured headers win), a person's none of the two.
    expect(keys.received.some(r => r.headers.authorization === basic)).toBe(false);
    // Backstage's own server: the person's plugin token and the tenant, nothing of the broker's.
    const onBehalf = actionsFront.headers.filter(
      h => h.authorization !== 'Bearer dev-only-static-token-0123456789',
    );
    expect(onBehalf.length).toBeGreaterThan(0);
    for (const headers of onBehalf) {
      expect(headers['x-broker-key']).toBeUndefined();
      expect(headers['x-tenant']).toBe(TENANT.value);
    }
  });

  it('never lets a client’s own token reach a backend, in any mode, and audits the mode only', () => {
    const clientTokens = Object.values(tokens);
    const seen = [whoami, whoamiModern, keys, keysModern].flatMap(s => s.received);
    const values = [
      ...seen.flatMap(r => [r.authorization, r.apiKey, r.cookie]),
      ...actionsFront.credentials.flatMap(c => [c.authorization, c.cookie]),
    ].filter((v): v is string => v !== undefined);
    expect(values.length).toBeGreaterThan(20);
    for (const value of values) {
      for (const token of clientTokens) expect(value).not.toContain(token);
    }
    // Backstage's own server got plugin tokens made for it on each person's behalf.
    const personal = actionsFront.credentials.filter(
      c => c.authorization !== 'Bearer dev-only-static-token-0123456789',
    );
    expect(personal.length).toBeGreaterThan(0);

    const audit = toolCallAuditLines(backend.output());
    const modes = new Set(audit.map(line => `${line.server}:${line.credentialMode}`));
    expect(modes).toEqual(
      new Set([
        'whoami:tokenExchange',
        'whoami-modern:tokenExchange',
        'keys:userCredential',
        'keys-modern:userCredential',
        'backstage:backstage',
      ]),
    );
    const output = backend.output();
    for (const secret of [
      'alice-key-1',
      'carol-key-1',
      'bob-key-1',
      'exchange-secret',
      ...clientTokens,
    ]) {
      expect(output).not.toContain(secret);
    }
  });
});
