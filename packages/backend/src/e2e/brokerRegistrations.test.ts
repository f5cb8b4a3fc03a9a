/*
 * Registrations ask, admins decide (spec §11.1), end to end: the real development backend (real
 * sign-in, catalog, RBAC, Backstage's own MCP server) discovers MCPServerRegistration resources
 * from the fake Kubernetes API server of @internal/fake-kube-apiserver (no cluster runs here;
 * the backend's real @kubernetes/client-node talks to it through a kubeconfig file; the test
 * writes registrations with the fake's `load`, as `kubectl apply` would), with real MCP servers
 * (whoami) and the RFC 8693 server of our test packages.
 *
 * A namespace owner who writes a registration cannot make the broker act as anyone else:
 * - hostile #1 asks for Backstage on-behalf-of tokens for the catalog at its own URL (spelled
 *   out, or through the admin's backstage profile): refused, its URL never hears from the broker;
 * - hostile #2 asks for a token exchange at its own token endpoint with the real IdP as the
 *   subject token's audience: refused, its token endpoint gets no request at all;
 * - a registration naming a profile its namespace may use works: a person's call carries the
 *   credential of the admin's profile (an exchanged token; a Backstage token for mcp-actions);
 * - namespaces and URL patterns of a profile are enforced, an unknown profile is refused, and
 *   editing a refused registration to a valid profile makes it serve.
 * Every refusal shows on /status and in the registration's Accepted condition.
 */
import { FakeKubeApiServer, startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import {
  startTokenExchangeServer,
  startWhoamiServer,
  type TokenExchangeServer,
  type WhoamiServer,
} from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { RecordingProxy, startRecordingProxy } from '../testing/recordingProxy';
import { brokerStatus, connectBrokerClient, waitFor, type BrokerClient } from './brokerTestKit';

const BROKER_TOKEN = 'broker-own-token';
const ACTIONS_STATIC_TOKEN = 'dev-only-static-token-0123456789';
const URL_ANNOTATION = 'devportal.kuadrant.io/mcp-server-url';
const PROFILE_ANNOTATION = 'devportal.kuadrant.io/credential-profile';

interface Refusal {
  namespace: string;
  name: string;
  reason: string;
  message: string;
}

describe('registrations ask, admins decide (spec §11.1)', () => {
  let fake: FakeKubeApiServer;
  let backend: BackendProcess;
  let sts: TokenExchangeServer;
  /** The registrant's own token endpoint, behind a recorder of every request it gets. */
  let hostileSts: TokenExchangeServer;
  let hostileTokenEndpoint: RecordingProxy;
  /** The server an allowed registration points at. */
  let search: WhoamiServer;
  /** URLs the registrants control. */
  let hostileBackstage: WhoamiServer;
  let hostileExchange: WhoamiServer;
  let hostileUrl: WhoamiServer;
  let otherTeam: WhoamiServer;
  const tokens: Record<string, string> = {};
  const clients: BrokerClient[] = [];

  /** Creates or replaces a registration (what `kubectl apply` does). */
  const register = async (
    namespace: string,
    name: string,
    url: string,
    spec: Record<string, unknown> = {},
    annotations: Record<string, string> = {},
  ) => {
    fake.load([
      {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata: { name, namespace, annotations: { [URL_ANNOTATION]: url, ...annotations } },
        spec: {
          targetRef: { name: 'unused-route' },
          credentialRef: { name: 'broker-token' },
          ...spec,
        },
      },
    ]);
  };
  const status = () => brokerStatus(backend.baseUrl, tokens.carol);
  const refusalOf = async (namespace: string, name: string) =>
    (
      (await status()) as unknown as { registrations: { refused: Refusal[] } }
    ).registrations.refused.find(r => r.namespace === namespace && r.name === name);
  const conditionOf = (namespace: string, name: string) =>
    (
      fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPServerRegistration', namespace, name)?.status
        ?.conditions as Array<Record<string, unknown>> | undefined
    )?.find(c => c.type === 'Accepted');
  /** Waits until the registration is refused for `reason`, on /status and in its condition. */
  const refused = async (namespace: string, name: string, reason: string) => {
    const refusal = await waitFor(
      async () => {
        const found = await refusalOf(namespace, name);
        return found?.reason === reason ? found : undefined;
      },
      30_000,
      `${namespace}/${name} refused for ${reason}`,
    );
    await waitFor(
      () => conditionOf(namespace, name)?.reason === reason,
      10_000,
      `the Accepted condition of ${namespace}/${name}`,
    );
    expect(conditionOf(namespace, name)).toMatchObject({
      status: 'False',
      reason,
      message: refusal.message,
    });
    expect((await status()).backends.map(b => b.name)).not.toContain(`${namespace}-${name}`);
    return refusal;
  };
  const served = (name: string) =>
    waitFor(
      async () => {
        const entry = (await status()).backends.find(b => b.name === name);
        return entry?.state === 'connected' && entry.counts.tools > 0 ? entry : undefined;
      },
      30_000,
      `${name} to serve`,
    );
  const callAs = async (user: string, tool: string) => {
    const client = await connectBrokerClient(backend.baseUrl, tokens[user]);
    clients.push(client);
    return (await client.client.callTool({ name: tool })) as any;
  };

  beforeAll(async () => {
    sts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'exchange-secret' },
      trustedIssuers: [],
      allowedTargets: ['search'],
    });
    // The registrant's IdP look-alike would accept the broker as a client of its own.
    hostileSts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'whatever' },
      trustedIssuers: [],
      allowedTargets: ['loot'],
    });
    hostileTokenEndpoint = await startRecordingProxy();
    hostileTokenEndpoint.target = new URL(hostileSts.issuer);
    const jwt = { jwksUrl: sts.jwksUrl, issuer: sts.issuer, audience: 'search' };
    search = await startWhoamiServer({ era: 'legacy', brokerToken: BROKER_TOKEN, jwt });
    [hostileBackstage, hostileExchange, hostileUrl, otherTeam] = await Promise.all(
      [1, 2, 3, 4].map(() => startWhoamiServer({ era: 'legacy', brokerToken: BROKER_TOKEN })),
    );

    fake = await startFakeKubeApiServer({ namespaces: ['team-a', 'team-b'] });
    fake.load([
      ...['team-a', 'team-b'].map(namespace => ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'broker-token', namespace },
        data: { token: Buffer.from(BROKER_TOKEN).toString('base64') },
      })),
      // The broker's own credential for mcp-actions' lists: Backstage's static token (app-config.yaml).
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'actions-token', namespace: 'team-a' },
        data: { token: Buffer.from(ACTIONS_STATIC_TOKEN).toString('base64') },
      },
    ]);
    const kubeconfig = await fake.writeKubeConfigFile();

    backend = await startBackendProcess({
      startTimeoutMs: 200_000,
      config: baseUrl => {
        sts.trust({
          issuer: `${baseUrl}/api/mcp-broker`,
          jwksUrl: `${baseUrl}/api/mcp-broker/.well-known/jwks.json`,
        });
        return {
          mcpBroker: {
            servers: [],
            credentialProfiles: {
              sso: {
                namespaces: ['team-a'],
                urls: [`${new URL(search.url).origin}/**`],
                mode: 'tokenExchange',
                tokenEndpoint: sts.tokenEndpoint,
                clientId: 'mcp-broker',
                clientSecret: 'exchange-secret',
                audience: 'search',
              },
              actions: { namespaces: ['team-a'], mode: 'backstage', targetPluginId: 'mcp-actions' },
            },
            kubernetes: {
              kubeconfig,
              namespaces: ['team-a', 'team-b'],
              resyncInterval: { seconds: 2 },
              retry: { initialDelay: { milliseconds: 100 }, maxDelay: { seconds: 1 } },
            },
          },
        };
      },
    });
    for (const user of ['alice', 'carol']) tokens[user] = await backend.signIn(user);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close()));
    await backend?.stop();
    await Promise.all(
      [
        fake,
        sts,
        hostileSts,
        hostileTokenEndpoint,
        search,
        hostileBackstage,
        hostileExchange,
        hostileUrl,
        otherTeam,
      ].map(s => s?.close()),
    );
  }, 30_000);

  it('refuses hostile registration #1 (catalog tokens to its own URL): spelled out or through the admin’s backstage profile, its URL hears nothing', async () => {
    await register('team-a', 'catalog-thief', hostileBackstage.url, {
      auth: { mode: 'backstage', targetPluginId: 'catalog' },
    });
    const spelledOut = await refused('team-a', 'catalog-thief', 'AuthNotAllowed');
    expect(spelledOut.message).toContain('spec.auth is not accepted');

    await register(
      'team-a',
      'actions-thief',
      hostileBackstage.url,
      {},
      { [PROFILE_ANNOTATION]: 'actions' },
    );
    const throughProfile = await refused('team-a', 'actions-thief', 'UrlNotAllowed');
    expect(throughProfile.message).toContain(`only to that plugin's own URL (`);
    expect(throughProfile.message).toContain(`${backend.baseUrl}/api/mcp-actions`);
    // Not a request of any kind, so no token of anyone's.
    expect(hostileBackstage.received).toEqual([]);
  });

  it('refuses hostile registration #2 (its own token endpoint, the real IdP as subject audience): its token endpoint gets no request at all', async () => {
    await register('team-a', 'subject-thief', hostileExchange.url, {
      auth: {
        mode: 'tokenExchange',
        tokenEndpoint: `${hostileTokenEndpoint.baseUrl}/token`,
        clientId: 'mcp-broker',
        clientSecretRef: { name: 'broker-token' },
        subjectTokenAudience: sts.tokenEndpoint,
        audience: 'loot',
      },
    });
    await refused('team-a', 'subject-thief', 'AuthNotAllowed');
    // A resync later (every registration is decided again every 2 s, reading its Secret), still
    // nothing went out.
    const secretReads = () =>
      fake.requests({ verb: 'get', resource: 'secrets', name: 'broker-token', namespace: 'team-a' })
        .length;
    const before = secretReads();
    await waitFor(() => secretReads() >= before + 3, 20_000, 'a resync of team-a');
    expect(hostileTokenEndpoint.credentials).toEqual([]);
    expect(hostileSts.exchanges).toEqual([]);
    expect(hostileExchange.received).toEqual([]);
    expect(await refusalOf('team-a', 'subject-thief')).toBeDefined();
  }, 40_000);

  it('serves a registration that names a profile its namespace may use: alice’s call carries the token exchanged for her by the admin’s profile', async () => {
    await register('team-a', 'search', search.url, {}, { [PROFILE_ANNOTATION]: 'sso' });
    const entry: any = await served('team-a-search');
    expect(entry.source).toEqual({
      type: 'kubernetes',
      namespace: 'team-a',
      name: 'search',
      // The object's uid: stored personal credentials are bound to it (spec §11.1).
      uid: expect.any(String),
      credentialProfile: 'sso',
    });
    expect(entry.auth).toEqual({ mode: 'tokenExchange', tokenEndpoint: sts.tokenEndpoint });
    const result = await callAs('alice', 'team-a-search_whoami');
    expect(JSON.parse(result.content[0].text)).toMatchObject({
      credential: 'jwt',
      sub: 'user:default/alice',
      aud: 'search',
      act: { sub: 'mcp-broker' },
    });
    expect(sts.exchanges.map(e => [e.clientId, e.subject, e.audience])).toEqual([
      ['mcp-broker', 'user:default/alice', 'search'],
    ]);
    await waitFor(() => conditionOf('team-a', 'search')?.status === 'True', 10_000, 'Accepted');
    expect(conditionOf('team-a', 'search')).toMatchObject({
      reason: 'Accepted',
      message: expect.stringContaining('with credential profile "sso" (tokenExchange)'),
    });
  }, 40_000);

  it('serves a backstage profile at the plugin’s own URL: alice and carol get their own catalog answers from mcp-actions', async () => {
    await register('team-a', 'actions', `${backend.baseUrl}/api/mcp-actions/v1`, {
      credentialProfile: 'actions',
      credentialRef: { name: 'actions-token' },
    });
    await served('team-a-actions');
    const kindsOf = async (user: string) => {
      const client = await connectBrokerClient(backend.baseUrl, tokens[user]);
      clients.push(client);
      const result: any = await client.client.callTool({
        name: 'team-a-actions_catalog.query-catalog-entities',
        arguments: { query: {}, fields: ['kind', 'metadata.name'] },
      });
      expect(result.isError).toBeFalsy();
      return new Set(
        (JSON.parse(result.content[0].text).items as Array<{ kind: string }>).map(i => i.kind),
      );
    };
    // examples/rbac-*: carol (portal-admin) reads Locations, alice does not.
    expect((await kindsOf('alice')).has('Location')).toBe(false);
    expect((await kindsOf('carol')).has('Location')).toBe(true);
  }, 60_000);

  it('enforces a profile’s namespaces and URL patterns, refuses an unknown profile, and serves a refused registration once it is edited to a valid profile', async () => {
    await register('team-b', 'search', otherTeam.url, { credentialProfile: 'sso' });
    expect((await refused('team-b', 'search', 'ProfileNotAllowed')).message).toContain(
      'credential profile "sso" may not be used from namespace team-b',
    );
    await register('team-a', 'elsewhere', hostileUrl.url, { credentialProfile: 'sso' });
    expect((await refused('team-a', 'elsewhere', 'UrlNotAllowed')).message).toContain(
      `${hostileUrl.url} is not one credential profile "sso" allows`,
    );
    await register('team-a', 'typo', search.url, { credentialProfile: 'ssso' });
    expect((await refused('team-a', 'typo', 'ProfileNotFound')).message).toContain(
      'credential profile "ssso" does not exist',
    );
    expect(otherTeam.received).toEqual([]);
    expect(hostileUrl.received).toEqual([]);

    // The owners fix the typo (the same registration, edited).
    await register('team-a', 'typo', search.url, { credentialProfile: 'sso' });
    await served('team-a-typo');
    expect(await refusalOf('team-a', 'typo')).toBeUndefined();
    await waitFor(() => conditionOf('team-a', 'typo')?.status === 'True', 10_000, 'Accepted=True');
    const result = await callAs('carol', 'team-a-typo_whoami');
    expect(JSON.parse(result.content[0].text)).toMatchObject({
      sub: 'user:default/carol',
      aud: 'search',
    });
  }, 90_000);

  it('never shows a secret on /status or in the log', async () => {
    const text = JSON.stringify(await status());
    const output = backend.output();
    for (const secret of [
      'exchange-secret',
      BROKER_TOKEN,
      ACTIONS_STATIC_TOKEN,
      ...Object.values(tokens),
    ]) {
      expect(text).not.toContain(secret);
      expect(output).not.toContain(secret);
    }
    // Each refusal was logged once, not at every resync.
    expect(output.split('team-a/catalog-thief is not used').length - 1).toBe(1);
  });
});
