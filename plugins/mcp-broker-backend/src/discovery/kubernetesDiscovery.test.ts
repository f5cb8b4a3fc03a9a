/*
 * Kubernetes discovery through the real plugin: startTestBackend (auth mocked: a request without
 * a token counts as a signed-in user), the fake Kubernetes API server over HTTPS (no cluster runs
 * here; the real @kubernetes/client-node talks to it), real MCP servers as backends and the
 * official SDK client on the broker's HTTP endpoint. The last tests: registrations that ask for
 * more than the admin's credential profiles give (spec §11.1) are refused where everyone looks
 * (log, /status, the registration's Accepted condition); the identity end to end with real
 * sign-in is packages/backend/src/e2e/brokerRegistrations.test.ts.
 */
import type { AddressInfo } from 'node:net';
import {
  coreServices,
  createServiceFactory,
  type RootLoggerService,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { FakeKubeApiServer, startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import * as k8s from '@kubernetes/client-node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpBrokerPlugin } from '../plugin';
import { NotificationMarker, notificationMarker } from '../__testUtils__/notificationMarker';
import { ScriptedMcpServer, startScriptedMcpServer } from '../testing/scriptedMcpServer';
import { SERVER_URL_ANNOTATION } from './registrationMapping';
import { waitFor } from '../testing/waitFor';

const NS = 'mcp';
const registrations = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  namespace: NS,
  plural: 'mcpserverregistrations',
};
/** Every log line of the backend (message and metadata), to check that no credential is logged. */
const logLines: string[] = [];
function capturingLogger(): RootLoggerService {
  const record = (level: string) => (message: string, meta?: unknown) => {
    logLines.push(`${level} ${message} ${meta === undefined ? '' : JSON.stringify(meta)}`);
  };
  return {
    error: record('error'),
    warn: record('warn'),
    info: record('info'),
    debug: record('debug'),
    child: () => capturingLogger(),
  };
}

describe('MCPServerRegistration discovery (startTestBackend, fake Kubernetes API server, real MCP servers, SDK client)', () => {
  let fake: FakeKubeApiServer;
  let alpha: ScriptedMcpServer; // demands the credential from the Secret
  let beta: ExampleMcpServer;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let base: string;
  let client: Client;
  let custom: k8s.CustomObjectsApi;
  let core: k8s.CoreV1Api;
  let marker: NotificationMarker;
  let rootConfig: ReturnType<typeof mockServices.rootConfig>;
  let brokerConfig: JsonObject;
  const listChanged: number[] = [];

  /** Creates an MCPServerRegistration (as its namespace's owners would). */
  const createRegistration = (metadata: object, spec: object) =>
    custom.createNamespacedCustomObject({
      ...registrations,
      body: {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata,
        spec,
      },
    });
  /** The open watches of registrations (the broker also watches MCPVirtualServers). */
  const registrationWatches = () =>
    fake.activeWatches().filter(w => w.plural === 'mcpserverregistrations');
  const toolNames = async () => (await client.listTools()).tools.map(t => t.name);
  const status = async () =>
    (await (await fetch(`${base}/status`)).json()) as {
      backends: Array<{
        name: string;
        state: string;
        url: string;
        lastConnectedAt?: string;
        source: unknown;
      }>;
      clients: { sessions: number; eventStreams: number };
      registrations: {
        refused: Array<{
          kind: string;
          namespace: string;
          name: string;
          reason: string;
          message: string;
        }>;
      };
    };
  const backend = async (name: string) => (await status()).backends.find(b => b.name === name);
  /**
   * Everything a change could still cause has reached the client: a resync that starts after
   * now has re-read alpha's Secret (and applied what it found), then alpha's marker arrived.
   */
  const settled = async () => {
    const secretReads = () =>
      fake.requests({ verb: 'get', resource: 'secrets', name: 'alpha-cred' }).length;
    const before = secretReads();
    await waitFor(() => secretReads() > before, 'a resync');
    await marker.passThrough();
  };

  beforeAll(async () => {
    fake = await startFakeKubeApiServer({ namespaces: [NS] });
    alpha = await startScriptedMcpServer({
      tools: ['one'],
      requiredAuthorization: 'Bearer sekrit-alpha',
      // prompts: for the marker (its prompts/list_changed), the list itself is empty.
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } },
    });
    beta = await startExampleMcpServer({ port: 0 });
    fake.load([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'alpha-cred', namespace: NS },
        data: { token: Buffer.from('sekrit-alpha').toString('base64') },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'alpha-route', namespace: NS },
        spec: { hostnames: ['127.0.0.1'], rules: [{ backendRefs: [{ name: 'alpha', port: 80 }] }] },
      },
      {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata: { name: 'alpha', namespace: NS },
        spec: {
          targetRef: { name: 'alpha-route' },
          toolPrefix: 'alpha_',
          credentialRef: { name: 'alpha-cred' },
        },
      },
    ]);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(fake.kubeConfigYaml);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    core = kc.makeApiClient(k8s.CoreV1Api);

    brokerConfig = {
      reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
      // No trailing notifications: everything is sent before the marker that follows it.
      coalesceWindow: { milliseconds: 0 },
      credentialProfiles: {
        sso: {
          namespaces: [NS],
          urls: [`http://127.0.0.1:${beta.port}/**`],
          mode: 'tokenExchange',
          tokenEndpoint: 'http://127.0.0.1:1/token',
          clientId: 'mcp-broker',
          clientSecret: 'sekrit-profile',
        },
        elsewhere: {
          namespaces: ['other-team'],
          mode: 'backstage',
          targetPluginId: 'mcp-actions',
        },
      },
      kubernetes: {
        kubeconfig: await fake.writeKubeConfigFile(),
        namespaces: [NS],
        routes: { scheme: 'http', port: alpha.port },
        retry: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
        resyncInterval: { milliseconds: 300 },
      },
    };
    rootConfig = mockServices.rootConfig({ data: { mcpBroker: brokerConfig } });
    ({ server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
        createServiceFactory({
          service: coreServices.rootLogger,
          deps: {},
          factory: () => capturingLogger(),
        }),
      ],
    }));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker`;
    await waitFor(
      async () => (await backend('mcp-alpha'))?.state === 'connected',
      'mcp-alpha to connect',
    );

    client = new Client({ name: 'k8s-test', version: '1.0.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      listChanged.push(Date.now());
    });
    marker = notificationMarker(client, async () => {
      await waitFor(() => alpha.openEventStreams() === 1, 'the broker’s event stream to alpha');
      alpha.sendListChanged('prompts');
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    // The SDK opens its GET stream after connect() resolves: wait until the broker has it.
    await waitFor(
      async () => (await status()).clients.eventStreams === 1,
      'the client’s event stream',
    );
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await http?.stop?.();
    await Promise.all([fake?.close(), alpha?.close(), beta?.close()]);
  });

  it('adds a registration found at start: HTTPRoute hostname → URL, Secret → Authorization, source on status', async () => {
    const entry = await backend('mcp-alpha');
    expect(entry).toMatchObject({
      url: `http://127.0.0.1:${alpha.port}/mcp`,
      state: 'connected',
      source: { type: 'kubernetes', namespace: NS, name: 'alpha' },
    });
    expect(JSON.stringify(await status())).not.toContain('sekrit');
    expect(await toolNames()).toContain('alpha_one');
    // One cluster-scoped list, then a watch from the list's resourceVersion.
    const watch = fake.requests({ verb: 'watch', resource: 'mcpserverregistrations' })[0];
    expect(watch.query.resourceVersion).toMatch(/^[1-9]\d*$/);
  });

  it('create → the server is connected and clients get one tools/list_changed', async () => {
    listChanged.length = 0;
    await createRegistration(
      {
        name: 'beta',
        namespace: NS,
        annotations: { [SERVER_URL_ANNOTATION]: beta.url },
      },
      { targetRef: { name: 'unused-route' }, toolPrefix: 'beta_' },
    );
    await waitFor(async () => (await toolNames()).includes('beta_confirm'), 'beta’s tools');
    await waitFor(() => listChanged.length === 1, 'tools/list_changed');
    await settled();
    expect(listChanged).toHaveLength(1);
    expect(beta.sessionCount()).toBe(1);
  }, 15_000);

  it('modify → the server is reconnected with the new prefix', async () => {
    listChanged.length = 0;
    const before = (await backend('mcp-beta'))!.lastConnectedAt;
    await custom.patchNamespacedCustomObject(
      { ...registrations, name: 'beta', body: { spec: { toolPrefix: 'b2_' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor(async () => {
      const names = await toolNames();
      return names.includes('b2_confirm') && !names.includes('beta_confirm');
    }, 'the renamed tools');
    expect((await backend('mcp-beta'))!.lastConnectedAt).not.toBe(before);
    await waitFor(() => beta.sessionCount() === 1, 'the old session to close');
    await settled();
    expect(listChanged).toHaveLength(1);
  }, 15_000);

  it('a dropped watch resumes from its resourceVersion without a re-list: the registration created in the gap arrives, nothing else is reconnected or announced twice', async () => {
    listChanged.length = 0;
    const alphaConnectedAt = (await backend('mcp-alpha'))!.lastConnectedAt;
    const betaConnectedAt = (await backend('mcp-beta'))!.lastConnectedAt;
    fake.clearRequestLog();
    const heldWatch = fake.hold({ verb: 'watch', resource: 'mcpserverregistrations' });
    fake.dropWatches();
    // Created while no watch is open: only the resumed watch's replay can deliver it.
    await createRegistration(
      {
        name: 'delta',
        namespace: NS,
        annotations: { [SERVER_URL_ANNOTATION]: beta.url },
      },
      { targetRef: { name: 'unused-route' }, toolPrefix: 'delta_' },
    );
    // The resumed watch is held until now, so delta was created while no watch was served.
    await waitFor(() => heldWatch.hits === 1, 'the resumed watch request');
    heldWatch.release();
    await waitFor(
      async () => (await toolNames()).includes('delta_confirm'),
      'delta’s tools',
      10_000,
    );
    expect(heldWatch.hits).toBe(1);
    await settled();
    expect(fake.requests({ verb: 'list', resource: 'mcpserverregistrations' })).toHaveLength(0);
    const resumed = fake.requests({ verb: 'watch', resource: 'mcpserverregistrations' });
    expect(resumed).toHaveLength(1);
    expect(resumed[0].query.resourceVersion).toMatch(/^[1-9]\d*$/);
    expect(registrationWatches()).toHaveLength(1);
    expect((await backend('mcp-alpha'))!.lastConnectedAt).toBe(alphaConnectedAt);
    expect((await backend('mcp-beta'))!.lastConnectedAt).toBe(betaConnectedAt);
    expect(alpha.openEventStreams()).toBe(1);
    expect(beta.sessionCount()).toBe(2); // mcp-beta and mcp-delta, one broker session each
    expect(listChanged).toHaveLength(1);
  }, 15_000);

  it('410 Gone forces a re-list, which finds the registrations deleted while no watch was open (one notification for both)', async () => {
    listChanged.length = 0;
    const alphaConnectedAt = (await backend('mcp-alpha'))!.lastConnectedAt;
    fake.clearRequestLog();
    const heldWatch = fake.hold({ verb: 'watch', resource: 'mcpserverregistrations' });
    fake.dropWatches();
    await custom.deleteNamespacedCustomObject({ ...registrations, name: 'beta' });
    await custom.deleteNamespacedCustomObject({ ...registrations, name: 'delta' });
    fake.compactHistory(); // the resumed watch's resourceVersion is now too old
    await waitFor(() => heldWatch.hits === 1, 'the resumed watch request');
    heldWatch.release();
    await waitFor(
      async () => !(await toolNames()).some(n => n.startsWith('b2_') || n.startsWith('delta_')),
      'beta’s and delta’s tools to go',
      10_000,
    );
    await waitFor(() => beta.sessionCount() === 0, 'beta’s session to close');
    expect(
      fake.requests({ verb: 'list', resource: 'mcpserverregistrations' }).length,
    ).toBeGreaterThanOrEqual(1);
    await waitFor(() => registrationWatches().length === 1, 'a new watch after the re-list');
    await settled();
    expect(listChanged).toHaveLength(1);
    expect((await backend('mcp-alpha'))!.lastConnectedAt).toBe(alphaConnectedAt);
    expect((await status()).backends.map(b => b.name)).toEqual(['mcp-alpha']);
  }, 20_000);

  it('keeps watching after API errors (backoff), then applies what it missed', async () => {
    fake.clearRequestLog();
    fake.failNext({ verb: 'watch' }, 500, { times: 2 });
    fake.dropWatches();
    await createRegistration(
      {
        name: 'gamma',
        namespace: NS,
        annotations: { [SERVER_URL_ANNOTATION]: beta.url },
      },
      { targetRef: { name: 'unused-route' } },
    );
    await waitFor(
      async () => (await toolNames()).includes('mcp-gamma_confirm'),
      'gamma’s tools (default prefix)',
      10_000,
    );
    expect(fake.requests({ verb: 'watch' }).filter(r => r.status === 500)).toHaveLength(2);
  }, 15_000);

  it('re-reads HTTPRoutes and Secrets at each resync: a route created later is used, a rotated Secret reconnects', async () => {
    await createRegistration(
      { name: 'epsilon', namespace: NS },
      {
        targetRef: { name: 'late-route' },
        toolPrefix: 'eps_',
        credentialRef: { name: 'alpha-cred' },
      },
    );
    // Two resyncs (two reads of the missing route) later, the registration is still not used.
    const routeReads = () =>
      fake
        .requests({ verb: 'get', resource: 'httproutes', name: 'late-route' })
        .filter(r => r.status === 404).length;
    await waitFor(() => routeReads() >= 3, 'the first read and two resyncs of the missing route');
    expect(await backend('mcp-epsilon')).toBeUndefined();
    await custom.createNamespacedCustomObject({
      group: 'gateway.networking.k8s.io',
      version: 'v1',
      namespace: NS,
      plural: 'httproutes',
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'late-route', namespace: NS },
        spec: { hostnames: ['127.0.0.1'] },
      },
    });
    await waitFor(
      async () => (await backend('mcp-epsilon'))?.state === 'connected',
      'mcp-epsilon once its route exists',
    );

    const rotate = (value: string) =>
      core.replaceNamespacedSecret({
        namespace: NS,
        name: 'alpha-cred',
        body: {
          metadata: { name: 'alpha-cred', namespace: NS },
          data: { token: Buffer.from(value).toString('base64') },
        },
      });
    await rotate('not-the-right-one');
    await waitFor(
      async () => (await backend('mcp-alpha'))?.state === 'failed',
      'mcp-alpha to use the rotated (wrong) credential',
    );
    await rotate('sekrit-alpha');
    await waitFor(
      async () => (await backend('mcp-alpha'))?.state === 'connected',
      'mcp-alpha to reconnect with the right one',
    );
    expect(JSON.stringify(await status())).not.toMatch(/sekrit|not-the-right-one/);
    // The skipped registration was reported once (not at every resync), by name, without values.
    expect(
      logLines.filter(l =>
        l.includes('mcp/epsilon is not used: HTTPRoute mcp/late-route not found'),
      ),
    ).toHaveLength(1);
    expect(logLines.some(l => /MCP backend mcp-alpha/.test(l))).toBe(true);
    expect(logLines.join('\n')).not.toMatch(/sekrit|not-the-right-one|c2Vrcml0/);
  }, 20_000);

  const conditionOf = (name: string) =>
    (
      fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPServerRegistration', NS, name)?.status
        ?.conditions as Array<Record<string, unknown>> | undefined
    )?.find(c => c.type === 'Accepted');
  const refused = async (name: string) =>
    (await status()).registrations.refused.find(r => r.name === name);
  /** Each resolution of the registrations below reads this Secret (their credentialRef) once. */
  const refusedCredReads = () =>
    fake.requests({ verb: 'get', resource: 'secrets', name: 'refused-cred' }).length;
  /** `times` more resolutions (resyncs) of registrations using refused-cred. */
  const resolvedAgain = async (times: number) => {
    const before = refusedCredReads();
    await waitFor(() => refusedCredReads() >= before + times, `${times} more resolutions`);
  };

  it('refuses a registration that spells out spec.auth: no server, the reason on /status, in its Accepted condition and once in the log', async () => {
    await core.createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: { name: 'refused-cred', namespace: NS },
        data: { token: Buffer.from('sekrit-refused').toString('base64') },
      },
    });
    await createRegistration(
      {
        name: 'hostile',
        namespace: NS,
        annotations: { [SERVER_URL_ANNOTATION]: beta.url },
      },
      {
        targetRef: { name: 'unused-route' },
        credentialRef: { name: 'refused-cred' },
        auth: { mode: 'backstage', targetPluginId: 'catalog' },
      },
    );
    const entry = await waitFor(() => refused('hostile'), 'the refusal on /status');
    expect(entry).toEqual({
      kind: 'MCPServerRegistration',
      namespace: NS,
      name: 'hostile',
      reason: 'AuthNotAllowed',
      message: expect.stringContaining('spec.auth is not accepted'),
    });
    await waitFor(() => conditionOf('hostile') !== undefined, 'the Accepted condition');
    expect(conditionOf('hostile')).toEqual({
      type: 'Accepted',
      status: 'False',
      reason: 'AuthNotAllowed',
      message: entry!.message,
      observedGeneration: 1,
      lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    // Two resyncs later: still refused, logged once, never a server.
    await resolvedAgain(2);
    expect(await backend('mcp-hostile')).toBeUndefined();
    expect(logLines.filter(l => l.includes('mcp/hostile is not used: spec.auth'))).toHaveLength(1);
    // Our own status write came back as a watch event without a second write.
    expect(fake.requests({ verb: 'patch', subresource: 'status', name: 'hostile' })).toHaveLength(
      1,
    );
  }, 20_000);

  it('refuses a profile its namespace may not use and one that does not exist; editing the registration to an allowed profile makes it serve', async () => {
    const patch = (body: object) =>
      custom.patchNamespacedCustomObject(
        { ...registrations, name: 'hostile', body },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    await patch({ spec: { auth: null, credentialProfile: 'elsewhere' } });
    await waitFor(
      async () => (await refused('hostile'))?.reason === 'ProfileNotAllowed',
      'ProfileNotAllowed',
    );
    await patch({ spec: { credentialProfile: 'no-such-profile' } });
    await waitFor(
      async () => (await refused('hostile'))?.reason === 'ProfileNotFound',
      'ProfileNotFound',
    );
    await waitFor(() => conditionOf('hostile')?.reason === 'ProfileNotFound', 'the condition');
    const refusedAt = conditionOf('hostile')!.lastTransitionTime;

    await patch({ spec: { credentialProfile: 'sso' } });
    await waitFor(
      async () => (await backend('mcp-hostile'))?.state === 'connected',
      'the registration to serve',
    );
    expect(await refused('hostile')).toBeUndefined();
    const served = (await status()).backends.find(b => b.name === 'mcp-hostile') as any;
    expect(served.source).toEqual({
      type: 'kubernetes',
      namespace: NS,
      name: 'hostile',
      // The object's uid: stored personal credentials are bound to it (identity/serverIdentity.ts).
      uid: expect.any(String),
      credentialProfile: 'sso',
    });
    expect(served.auth).toMatchObject({ mode: 'tokenExchange' });
    await waitFor(() => conditionOf('hostile')?.status === 'True', 'Accepted=True');
    expect(conditionOf('hostile')).toMatchObject({
      reason: 'Accepted',
      message: expect.stringContaining('with credential profile "sso" (tokenExchange)'),
      observedGeneration: 4,
    });
    expect((conditionOf('hostile')!.lastTransitionTime as string) >= (refusedAt as string)).toBe(
      true,
    );
    expect(JSON.stringify(await status())).not.toContain('sekrit-profile');
    expect(
      JSON.stringify(
        fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPServerRegistration', NS, 'hostile'),
      ),
    ).not.toContain('sekrit');
  }, 20_000);

  it('refuses a URL the profile does not allow', async () => {
    await createRegistration(
      {
        name: 'elsewhere',
        namespace: NS,
        annotations: { [SERVER_URL_ANNOTATION]: `http://127.0.0.1:${alpha.port}/mcp` },
      },
      { targetRef: { name: 'unused-route' }, credentialProfile: 'sso' },
    );
    expect(await waitFor(() => refused('elsewhere'), 'the refusal')).toMatchObject({
      reason: 'UrlNotAllowed',
      message: expect.stringContaining(
        `http://127.0.0.1:${alpha.port}/mcp is not one credential profile "sso" allows`,
      ),
    });
    expect(await backend('mcp-elsewhere')).toBeUndefined();
    await waitFor(() => conditionOf('elsewhere')?.reason === 'UrlNotAllowed', 'the condition');
  }, 15_000);

  it('decides every registration again when a config reload changes the profiles', async () => {
    const profiles = brokerConfig.credentialProfiles as any;
    rootConfig.update({
      data: {
        mcpBroker: {
          ...brokerConfig,
          credentialProfiles: {
            ...profiles,
            sso: {
              ...profiles.sso,
              urls: [...profiles.sso.urls, `http://127.0.0.1:${alpha.port}/mcp`],
            },
          },
        },
      },
    });
    await waitFor(async () => (await backend('mcp-elsewhere')) !== undefined, 'mcp-elsewhere');
    expect(await refused('elsewhere')).toBeUndefined();
    await waitFor(() => conditionOf('elsewhere')?.status === 'True', 'Accepted=True');
  }, 15_000);

  it('logs a 403 on the status write once and goes on deciding', async () => {
    const forbidden = fake.forbid({ verb: 'patch', subresource: 'status' });
    try {
      for (const name of ['refused-one', 'refused-two']) {
        await createRegistration(
          { name, namespace: NS, annotations: { [SERVER_URL_ANNOTATION]: beta.url } },
          {
            targetRef: { name: 'unused-route' },
            credentialRef: { name: 'refused-cred' },
            credentialProfile: 'no-such-profile',
          },
        );
      }
      await waitFor(async () => (await refused('refused-two')) !== undefined, 'both refusals');
      const refusedWrites = () =>
        fake
          .requests({ verb: 'patch', subresource: 'status' })
          .filter(r => r.name === 'refused-one' || r.name === 'refused-two')
          .map(r => r.status);
      await waitFor(() => refusedWrites().length === 2, 'both status writes');
      // A resync of each: the verdict is the same, so no second write.
      await resolvedAgain(3);
      expect(refusedWrites()).toEqual([403, 403]);
      expect(conditionOf('refused-one')).toBeUndefined();
      expect(
        logLines.filter(
          l => l.includes('Cannot write the Accepted condition') && l.includes('403'),
        ),
      ).toHaveLength(1);
      expect(await refused('refused-one')).toMatchObject({ reason: 'ProfileNotFound' });
    } finally {
      forbidden.remove();
    }
  }, 15_000);
});
