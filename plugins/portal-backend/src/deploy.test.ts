/*
 * deploy/ against what the plugin really does: the CRDs are loaded into the fake API
 * server of @internal/fake-kube-apiserver (which registers their kinds and status
 * subresources from them), the store and the resource source run every operation, and
 * then
 * - the ClusterRole in deploy/rbac.yaml must list exactly the (API group, resource,
 *   verb) triples the request log shows: no missing verb, no spare one;
 * - every object the store wrote must fit the CRD's schema with unknown fields
 *   refused, because a real API server prunes fields a structural schema does not
 *   declare (the fake keeps them).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import yaml from 'js-yaml';
import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { MCP_TARGET_GROUP, OWNER_ANNOTATION } from '@devportal/plugin-portal-common';
import {
  startFakeKubeApiServer,
  wellKnownResources,
  type FakeKubeApiServer,
  type KubeObject,
} from '@internal/fake-kube-apiserver';
import { KubernetesResourceSource } from './resources/KubernetesResourceSource';
import { KubernetesPortalStore } from './store/kubernetes/KubernetesPortalStore';
import { createKubernetesApi } from './store/kubernetes/kubernetesClient';
import { readKubernetesStoreConfig } from './store/kubernetes/kubernetesConfig';

const DEPLOY = resolve(__dirname, '../../../deploy');
const TOYSTORE = resolve(__dirname, '../../../examples/toystore.yaml');
const BOB = 'user:default/bob';

function loadYaml(path: string): KubeObject[] {
  return yaml.loadAll(readFileSync(path, 'utf8')).filter(Boolean) as KubeObject[];
}

/** A CRD schema as JSON Schema, refusing what a real API server would prune. */
function strictSchema(schema: any): any {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: any = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!key.startsWith('x-kubernetes-')) out[key] = strictSchema(value);
  }
  if (schema.properties !== undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  if (schema.properties?.metadata !== undefined) {
    out.properties.metadata = { type: 'object' };
  }
  return out;
}

describe('deploy/ on a fake Kubernetes API server', () => {
  let fake: FakeKubeApiServer;

  afterAll(async () => {
    await fake?.close();
  });

  it('serves the CRDs, fits the objects the store writes and grants exactly the verbs used', async () => {
    fake = await startFakeKubeApiServer({
      namespaces: ['toystore'],
      resources: wellKnownResources().filter(r => r.group !== 'devportal.kuadrant.io'),
    });
    const crds = [
      ...loadYaml(`${DEPLOY}/crds/devportal.kuadrant.io_apiproducts.yaml`),
      ...loadYaml(`${DEPLOY}/crds/devportal.kuadrant.io_apikeys.yaml`),
    ];
    fake.load(crds);
    await fake.loadFile(TOYSTORE);

    const config = readKubernetesStoreConfig(
      new ConfigReader({
        portal: { kubernetes: { kubeconfig: await fake.writeKubeConfigFile() } },
      }),
    );
    const logger = mockServices.logger.mock();
    const api = await createKubernetesApi({ config, logger });
    const store = KubernetesPortalStore.fromApi(api, { logger });
    const resources = KubernetesResourceSource.create({ api, logger });
    fake.clearRequestLog();

    // Every operation of the store and the resource source, including the race paths.
    const product = await store.createProduct({
      namespace: 'toystore',
      name: 'toys',
      annotations: { [OWNER_ANNOTATION]: BOB },
      spec: {
        displayName: 'Toys',
        description: 'All the toys',
        version: 'v1',
        targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
        approvalMode: 'manual',
        publishStatus: 'Published',
        tags: ['a'],
        documentation: { docsURL: 'https://example.com' },
        contact: { team: 'payments' },
      },
    });
    await store.replaceProduct({
      ...product,
      metadata: { ...product.metadata, labels: { a: 'b' } },
    });
    await store.listProducts({ ownerRefs: [BOB] });
    const ref = (k: { metadata: { namespace: string; name: string } }) => ({
      namespace: k.metadata.namespace,
      name: k.metadata.name,
    });
    const newKey = (planTier: string) => ({
      namespace: 'toystore',
      spec: {
        apiProductRef: { name: 'toys' },
        planTier,
        useCase: 'testing',
        requestedBy: { userId: 'user:default/alice', email: 'alice@example.com' },
        expiresAt: '2099-01-01T00:00:00Z',
      },
    });
    const first = await store.createKey(newKey('gold'));
    await store.updatePendingKey(ref(first), { useCase: 'more testing', expiresAt: null });
    await store.reviewKey(ref(first), { phase: 'Rejected', reviewedBy: BOB, reason: 'no' });
    const second = await store.createKey(newKey('gold')); // takes the stale claim over
    await Promise.allSettled(
      ['s1', 's2'].map(secret =>
        store.reviewKey(ref(second), { phase: 'Approved', reviewedBy: BOB, secret }),
      ),
    );
    await store.revealSecret(ref(second));
    await store.createKey({
      ...newKey('silver'),
      approval: { reviewedBy: 'system:automatic-approval', secret: 's3' },
    });
    await store.listKeys({
      ownedBy: { userRef: BOB, ownershipRefs: [BOB] },
      phase: 'Approved',
    });
    // An MCP product with its plans, and an access request of it (no Secret).
    const tools = await store.createProduct({
      namespace: 'toystore',
      name: 'tools',
      annotations: { [OWNER_ANNOTATION]: BOB },
      spec: {
        displayName: 'Example tools',
        targetRef: { group: MCP_TARGET_GROUP, kind: 'MCPServer', name: 'example' },
        approvalMode: 'automatic',
        publishStatus: 'Published',
        plans: [
          {
            tier: 'bronze',
            description: 'Five a day',
            limits: { toolCalls: [{ calls: 5, per: 'day', tools: ['echo*'] }] },
          },
        ],
      },
    });
    await store.createKey({
      namespace: 'toystore',
      spec: {
        apiProductRef: { name: 'tools' },
        planTier: 'bronze',
        requestedBy: { userId: 'user:default/alice' },
      },
      approval: { reviewedBy: 'system:automatic-approval' },
    });
    await store.listMcpGrantsPage({ targetKind: 'MCPServer' }, new Date(), { limit: 10 });
    await store.countLiveGrants(ref(tools), 'bronze', new Date());
    for (const kind of ['HTTPRoute', 'PlanPolicy', 'AuthPolicy', 'RateLimitPolicy'] as const) {
      await resources.list(kind);
      await resources.get(kind, { namespace: 'toystore', name: 'x' });
    }

    // The objects as stored fit the schemas (nothing a real cluster would prune).
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const crd of crds) {
      const validate = ajv.compile(strictSchema(crd.spec.versions[0].schema.openAPIV3Schema));
      const objects = fake.listObjects(
        'devportal.kuadrant.io/v1alpha1',
        crd.spec.names.kind,
        'toystore',
      );
      expect(objects.length).toBeGreaterThan(0);
      for (const object of objects) {
        expect({
          kind: object.kind,
          valid: validate(object),
          errors: validate.errors ?? null,
        }).toEqual({
          kind: object.kind,
          valid: true,
          errors: null,
        });
      }
    }

    await store.deleteKey(ref(second));
    await store.deleteProduct(ref(product));

    // Exactly the verbs the ClusterRole grants.
    const used = new Set(
      fake
        .requests(r => r.isResourceRequest)
        .map(
          r =>
            `${r.apiGroup ?? ''} ${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.verb}`,
        ),
    );
    const role = loadYaml(`${DEPLOY}/rbac.yaml`).find(o => o.kind === 'ClusterRole')!;
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
    expect([...used].sort()).toEqual([...granted].sort());
  }, 30_000);
});
