/*
 * deploy/ against what the broker's discovery really does: the fake Kubernetes API server of
 * @internal/fake-kube-apiserver serves MCPServerRegistration and MCPVirtualServer only because
 * the CRDs in deploy/crds register them; the discovery runs (start, create, change, delete, 410
 * re-list, in cluster-wide and per-namespace mode; a virtual server accepted, one refused); then the ClusterRole in deploy/mcp-broker-rbac.yaml must
 * list exactly the (API group, resource, verb) triples of the request log.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import {
  parseManifests,
  startFakeKubeApiServer,
  wellKnownResources,
  type FakeKubeApiServer,
} from '@internal/fake-kube-apiserver';
import * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import { readCredentialProfiles } from '../identity/credentialProfiles';
import { createKubernetesDiscovery } from './createKubernetesDiscovery';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import type { KubernetesDiscovery } from './createKubernetesDiscovery';
import { waitFor } from '../testing/waitFor';

const DEPLOY = resolve(__dirname, '../../../../deploy');
const registrations = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  plural: 'mcpserverregistrations',
};

describe('deploy/ for the MCP broker on a fake Kubernetes API server', () => {
  let fake: FakeKubeApiServer;
  const watchers: KubernetesDiscovery[] = [];

  afterAll(async () => {
    await Promise.all(watchers.map(w => w.stop()));
    await fake?.close();
  }, 15_000);

  it('the CRD serves MCPServerRegistration and the ClusterRole grants exactly what discovery uses', async () => {
    fake = await startFakeKubeApiServer({
      namespaces: ['team-a', 'team-b'],
      // Without the CRD the kind would not exist: it must come from deploy/crds.
      resources: wellKnownResources().filter(
        r => r.plural !== 'mcpserverregistrations' && r.plural !== 'mcpvirtualservers',
      ),
    });
    fake.load(readFileSync(`${DEPLOY}/crds/mcp.kuadrant.io_mcpserverregistrations.yaml`, 'utf8'));
    fake.load(readFileSync(`${DEPLOY}/crds/mcp.kuadrant.io_mcpvirtualservers.yaml`, 'utf8'));
    fake.load([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'cred', namespace: 'team-a' },
        data: { token: Buffer.from('s3cret').toString('base64') },
      },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'exchange', namespace: 'team-b' },
        data: { clientSecret: Buffer.from('exchange-secret').toString('base64') },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'route', namespace: 'team-a' },
        spec: { hostnames: ['weather.example.com'] },
      },
      {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPVirtualServer',
        metadata: { name: 'forecast', namespace: 'team-a' },
        spec: { tools: ['weather_forecast'] },
      },
      {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPVirtualServer',
        metadata: { name: 'borrowed', namespace: 'team-b' },
        spec: { tools: ['weather_forecast'] },
      },
      {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata: { name: 'weather', namespace: 'team-a' },
        spec: {
          targetRef: { name: 'route' },
          toolPrefix: 'weather_',
          credentialRef: { name: 'cred' },
        },
      },
    ]);
    const kubeconfig = await fake.writeKubeConfigFile();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(fake.kubeConfigYaml);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);

    const seen: Record<string, BrokerServerConfig[]> = {};
    const endpoints: Record<string, string[]> = {};
    const start = (key: string, namespaces?: string[], labelSelector?: string) => {
      const config: KubernetesDiscoveryConfig = {
        source: { type: 'kubeconfig', path: kubeconfig },
        namespaces,
        labelSelector,
        requestTimeoutMs: 5000,
        routes: { scheme: 'https' },
        resyncIntervalMs: 60_000,
        backoff: { initialDelayMs: 20, maxDelayMs: 100 },
      };
      const discovery: KubernetesDiscovery = createKubernetesDiscovery({
        config,
        logger: mockServices.logger.mock(),
        profiles: readCredentialProfiles(
          new ConfigReader({
            credentialProfiles: {
              sso: {
                namespaces: ['team-b'],
                mode: 'tokenExchange',
                tokenEndpoint: 'https://sso.example.com/token',
                clientId: 'mcp-broker',
                clientSecretRef: { namespace: 'team-b', name: 'exchange' },
                audience: 'search',
              },
            },
          }),
        ),
        pluginBaseUrls: async () => [],
        onServers: servers => {
          seen[key] = servers;
          discovery.virtualServers.setServers(servers);
        },
        onEndpoints: configs => {
          endpoints[key] = configs.map(c => c.name);
        },
      });
      watchers.push(discovery);
      discovery.start();
    };
    start('cluster');
    start('namespaced', ['team-a', 'team-b']);
    start('labelled', undefined, 'mcp-broker=backstage');
    const names = (key: string) => (seen[key] ?? []).map(s => s.name).join(',');
    await waitFor(
      () => names('cluster') === 'team-a-weather' && names('namespaced') === 'team-a-weather',
      'the first registration',
    );
    // A virtual server naming its own namespace's tool serves; one naming another's is refused,
    // and both verdicts are written to their status (the CRD's status subresource).
    await waitFor(() => endpoints.cluster?.join(',') === 'team-a-forecast', 'the endpoint');
    const accepted = (namespace: string, name: string) =>
      fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPVirtualServer', namespace, name)?.status
        ?.conditions?.[0];
    await waitFor(() => accepted('team-a', 'forecast')?.status === 'True', 'its condition');
    await waitFor(
      () => accepted('team-b', 'borrowed')?.reason === 'ToolOutsideNamespace',
      'the refusal',
    );
    expect(seen.cluster[0]).toMatchObject({
      url: 'https://weather.example.com/mcp',
      headers: { Authorization: 'Bearer s3cret' },
    });

    await custom.createNamespacedCustomObject({
      ...registrations,
      namespace: 'team-b',
      body: {
        apiVersion: 'mcp.kuadrant.io/v1alpha1',
        kind: 'MCPServerRegistration',
        metadata: {
          name: 'search',
          namespace: 'team-b',
          labels: { 'mcp-broker': 'backstage' },
          annotations: { 'devportal.kuadrant.io/mcp-server-url': 'http://search:8080/mcp' },
        },
        spec: { targetRef: { name: 'unused' }, credentialProfile: 'sso' },
      },
    });
    await waitFor(
      () =>
        names('cluster') === 'team-a-weather,team-b-search' &&
        names('namespaced') === names('cluster'),
      'the second',
    );
    await waitFor(() => names('labelled') === 'team-b-search', 'the labelled one only');
    // spec.credentialProfile survives the CRD's schema; the profile's Secret is read.
    expect(seen.cluster.find(s => s.name === 'team-b-search')?.auth).toMatchObject({
      mode: 'tokenExchange',
      clientSecret: 'exchange-secret',
      audience: 'search',
    });
    // The verdict is written to the registration's status (the CRD's status subresource).
    await waitFor(
      () =>
        fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPServerRegistration', 'team-b', 'search')
          ?.status?.conditions?.[0]?.status === 'True',
      'the Accepted condition',
    );
    expect(
      fake
        .requests({ verb: ['list', 'watch'] })
        .filter(r => r.query.labelSelector === 'mcp-broker=backstage'),
    ).toHaveLength(4);
    await custom.deleteNamespacedCustomObject({
      ...registrations,
      namespace: 'team-a',
      name: 'weather',
    });
    fake.compactHistory();
    fake.dropWatches();
    await waitFor(
      () => names('cluster') === 'team-b-search' && names('namespaced') === 'team-b-search',
      'the deletion',
    );
    expect(names('labelled')).toBe('team-b-search');
    // Two resource types, in two cluster-wide scopes and two namespaces.
    await waitFor(() => fake.activeWatches().length === 8, 'the watches to resume');

    const used = new Set(
      fake
        .requests(r => r.isResourceRequest)
        .map(
          r =>
            `${r.apiGroup ?? ''} ${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.verb}`,
        ),
    );
    const role = parseManifests(readFileSync(`${DEPLOY}/mcp-broker-rbac.yaml`, 'utf8')).find(
      o => o.kind === 'ClusterRole',
    )!;
    const granted = new Set<string>();
    for (const rule of role.rules as Array<{
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }>) {
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs) granted.add(`${group} ${resource} ${verb}`);
    }
    // The test's own writes (create/delete of registrations) are not the broker's.
    const brokerUsed = [...used].filter(t => !/ (create|delete)$/.test(t));
    expect(brokerUsed.sort()).toEqual([...granted].sort());
  }, 30_000);

  it('stops promptly even while a watch request hangs, and leaves no watch open (uses the watchers of the test above)', async () => {
    fake.hangNext({ verb: 'watch' }, { times: 1 });
    fake.dropWatches();
    await waitFor(
      () => fake.requests({ verb: 'watch' }).some(r => r.status === 0),
      'a hanging watch request',
    );
    // The hanging request is never answered: stop() resolving at all shows it does not wait for
    // it (were it to, the test would time out).
    await Promise.all(watchers.splice(0).map(w => w.stop()));
    expect(fake.requests({ verb: 'watch' }).some(r => r.status === 0)).toBe(true);
    // A watch request already on its way when stop() ran is closed as soon as it is answered
    // (client-node hands out a watch's AbortController only then).
    await waitFor(() => fake.activeWatches().length === 0, 'every watch stream to close', 3000);
  }, 10_000);
});
