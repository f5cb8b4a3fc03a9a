/*
 * The credential of each mode on a person's request (spec §11), and no passthrough: whatever the
 * mode, the headers never carry the client's own token. The token exchange runs against the RFC
 * 8693 server of our test packages and personal credentials against SQLite; the `backstage` mode
 * uses Backstage's mock auth service here (its real tokens are tested end to end on the
 * development backend, brokerIdentity.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { startTokenExchangeServer, type TokenExchangeServer } from '@internal/test-mcp-backends';
import knexFactory, { type Knex } from 'knex';
import { migrateBrokerDatabase } from '../store/migrations';
import {
  DatabaseCredentialRequestStore,
  DatabasePersonalCredentialStore,
} from '../store/DatabasePersonalCredentialStore';
import { BackendCredentialProvider, type CredentialServer } from './BackendCredentialProvider';
import { CredentialCipher } from './CredentialCipher';
import { CredentialRequiredError, PersonalCredentialError } from './credentialErrors';
import {
  BackstageModeCredentials,
  brokerModeCredentials,
  TokenExchangeModeCredentials,
  UserCredentialModeCredentials,
  type CallerIdentity,
} from './credentialModes';
import { ExchangedTokens } from './ExchangedTokens';
import { PersonalCredentialService } from './PersonalCredentialService';
import { parseServerAuth } from './serverAuth';
import { SubjectTokenIssuer } from './SubjectTokenIssuer';
import { serveJwks } from './__testUtils__/servedJwks';

const CLIENT_TOKEN = mockCredentials.user.token('user:default/alice');
const PAGE = 'http://localhost:7007/api/mcp-broker/credentials';
const alice: CallerIdentity = {
  principal: 'user:user:default/alice',
  credentials: async () => mockCredentials.user('user:default/alice'),
  clientSessionId: 'session-1',
  era: 'legacy',
};
const service: CallerIdentity = {
  principal: 'service:external:ci',
  credentials: async () => mockCredentials.service('external:ci'),
  era: 'modern',
};
/** The broker's own static headers: a credential under a name it cannot recognise, too. */
const STATIC = {
  Authorization: 'Bearer broker-own',
  'X-Tenant': 'acme',
  'X-Broker-Key': 'broker-own-key',
};

describe('BackendCredentialProvider', () => {
  let knex: Knex;
  let sts: TokenExchangeServer;
  let jwks: Awaited<ReturnType<typeof serveJwks>>;
  let provider: BackendCredentialProvider;
  let personal: PersonalCredentialService;
  let requests: DatabaseCredentialRequestStore;
  const servers: Record<string, CredentialServer> = {};

  beforeAll(async () => {
    knex = knexFactory({
      client: 'better-sqlite3',
      connection: ':memory:',
      useNullAsDefault: true,
    });
    await migrateBrokerDatabase(knex);
    const issuer = await SubjectTokenIssuer.create({ issuer: 'http://broker.test/api/mcp-broker' });
    jwks = await serveJwks(() => issuer);
    sts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'secret' },
      trustedIssuers: [{ issuer: issuer.issuer, jwksUrl: jwks.url }],
      allowedTargets: ['whoami'],
    });
    personal = await PersonalCredentialService.create({
      store: new DatabasePersonalCredentialStore(knex),
      cipher: new CredentialCipher(randomBytes(32)),
      serverIdentity: name => `identity-of-${name}`,
      logger: mockServices.logger.mock(),
    });
    requests = new DatabaseCredentialRequestStore(knex);
    const exchangedTokens = new ExchangedTokens({ issuer, timeoutMs: 10_000 });
    provider = new BackendCredentialProvider({
      modes: [
        brokerModeCredentials,
        new BackstageModeCredentials(mockServices.auth()),
        new TokenExchangeModeCredentials(exchangedTokens),
        new UserCredentialModeCredentials({
          credentials: personal,
          requests,
          pageUrl: server => `${PAGE}/${server}/connect`,
          elicitationTtlMs: 60_000,
        }),
      ],
      exchangedTokens,
      pageUrl: server => `${PAGE}/${server}/connect`,
    });
    const server = (name: string, auth?: unknown): CredentialServer => ({
      name,
      headers: STATIC,
      nonCredentialHeaders: ['x-tenant'],
      ...(auth === undefined ? {} : { auth: parseServerAuth(auth, 'auth') }),
    });
    servers.broker = server('broker');
    servers.backstage = server('backstage', { mode: 'backstage', targetPluginId: 'mcp-actions' });
    servers.exchange = server('exchange', {
      mode: 'tokenExchange',
      tokenEndpoint: sts.tokenEndpoint,
      clientId: 'mcp-broker',
      clientSecret: 'secret',
      audience: 'whoami',
    });
    servers.github = server('github', { mode: 'userCredential' });
    servers.apikey = server('apikey', { mode: 'userCredential', header: 'X-Api-Key' });
  });
  afterAll(async () => {
    await sts.close();
    await jwks.close();
    await knex.destroy();
  });

  it('presents the static headers in broker mode, and the person’s credential instead of the broker’s own otherwise', async () => {
    await personal.save(alice.principal, 'github', 'ghp_alice');
    await personal.save(alice.principal, 'apikey', 'key-alice');
    const headersOf = async (name: string) =>
      (await provider.requestHeaders(servers[name], alice)).headers;

    expect(await provider.requestHeaders(servers.broker, alice)).toEqual({
      mode: 'broker',
      personal: false,
      headers: STATIC,
    });
    const backstage = await headersOf('backstage');
    expect(Object.keys(backstage).sort()).toEqual(['Authorization', 'X-Tenant']);
    expect(backstage['X-Tenant']).toBe('acme');
    expect(backstage.Authorization).toMatch(/^Bearer mock-service-token:/);
    expect(backstage.Authorization).toContain('"target":"mcp-actions"');
    const exchanged = await headersOf('exchange');
    const claims = JSON.parse(
      Buffer.from(exchanged.Authorization.split('.')[1], 'base64url').toString('utf8'),
    );
    expect(claims).toMatchObject({ sub: 'user:default/alice', aud: 'whoami' });
    expect(Object.keys(exchanged).sort()).toEqual(['Authorization', 'X-Tenant']);
    expect(await headersOf('github')).toEqual({
      'X-Tenant': 'acme',
      Authorization: 'Bearer ghp_alice',
    });
    // The mode's header replaces; the broker's own Authorization is not sent along.
    expect(await headersOf('apikey')).toEqual({ 'X-Tenant': 'acme', 'X-Api-Key': 'key-alice' });
  });

  it('sends no static header with a person’s credential unless the admin marked it as not a credential', async () => {
    await personal.save(alice.principal, 'apikey', 'key-alice');
    const unmarked: CredentialServer = { ...servers.apikey, nonCredentialHeaders: undefined };
    expect((await provider.requestHeaders(unmarked, alice)).headers).toEqual({
      'X-Api-Key': 'key-alice',
    });
    // A marked header never overrides the person's credential.
    const markedCredential: CredentialServer = {
      ...servers.apikey,
      headers: { ...STATIC, 'X-Api-Key': 'broker-key' },
      nonCredentialHeaders: ['X-Api-Key', 'X-Tenant'],
    };
    expect((await provider.requestHeaders(markedCredential, alice)).headers).toEqual({
      'X-Tenant': 'acme',
      'X-Api-Key': 'key-alice',
    });
  });

  it('never puts the client’s token into a backend request, in any mode', async () => {
    for (const name of Object.keys(servers)) {
      const { headers } = await provider.requestHeaders(servers[name], alice);
      for (const value of Object.values(headers)) expect(value).not.toContain(CLIENT_TOKEN);
    }
  });

  it('asks for the credential with a URL elicitation bound to the person when none is stored', async () => {
    const carol: CallerIdentity = { ...alice, principal: 'user:user:default/carol' };
    const error = await provider.requestHeaders(servers.github, carol).catch(e => e);
    expect(error).toBeInstanceOf(CredentialRequiredError);
    const { elicitationId, url, mode } = error.elicitation;
    expect(mode).toBe('url');
    expect(url).toBe(`${PAGE}/github/connect?elicitationId=${elicitationId}`);
    expect(error.toJsonRpcError()).toMatchObject({
      code: -32042,
      data: { elicitations: [{ mode: 'url', url }] },
    });
    expect(await requests.get(elicitationId, Date.now())).toMatchObject({
      principal: 'user:user:default/carol',
      server: 'github',
      clientSessionId: 'session-1',
    });
    // 2026-07-28: no elicitation id (the retry checks again), the page without a query.
    const modern = await provider
      .requestHeaders(servers.github, { ...carol, era: 'modern' })
      .catch(e => e);
    expect(modern.elicitation).toEqual({
      mode: 'url',
      url: `${PAGE}/github/connect`,
      message: expect.any(String),
    });
  });

  it('tells a service principal that token exchange needs a person, and names a failed exchange', async () => {
    await expect(provider.requestHeaders(servers.exchange, service)).rejects.toMatchObject({
      reason: 'unsupported-principal',
    });
    sts.failNext({ status: 400, error: 'invalid_grant', description: 'user disabled' });
    const error = await provider
      .requestHeaders(servers.exchange, { ...alice, principal: 'user:user:default/dave' })
      .catch(e => e);
    expect(error).toBeInstanceOf(PersonalCredentialError);
    expect(error.message).toContain('was refused: HTTP 400 invalid_grant.');
    expect(error.message).not.toContain('user disabled');
    expect(provider.statusOf(servers.exchange)).toEqual({
      mode: 'tokenExchange',
      tokenEndpoint: sts.tokenEndpoint,
      lastExchangeError: {
        at: expect.any(String),
        message: expect.stringMatching(/was refused: HTTP 400 invalid_grant$/),
      },
    });
  });

  it('turns a backend 401/403 into the person’s error and forgets the exchanged token', async () => {
    await provider.requestHeaders(servers.exchange, alice);
    const cached = sts.exchanges.length;
    await provider.requestHeaders(servers.exchange, alice);
    expect(sts.exchanges.length).toBe(cached);
    const refused = provider.refused(servers.exchange, alice, 401);
    expect(refused.message).toMatch(
      /^Your credential for exchange was refused \(the server answered HTTP 401/,
    );
    await provider.requestHeaders(servers.exchange, alice);
    expect(sts.exchanges.length).toBe(cached + 1);
    expect(provider.refused(servers.github, alice, 403).message).toContain(
      `${PAGE}/github/connect`,
    );
  });
});
