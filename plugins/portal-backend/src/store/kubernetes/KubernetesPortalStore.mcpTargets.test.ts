/*
 * The Kubernetes store's side of MCP targets (contract mcp-access §3.5): the target label on
 * MCP products and their access requests, lists that select by it, and the answer for a
 * cluster whose APIProduct CRD knows HTTPRoutes only. Against the fake API server of
 * @internal/fake-kube-apiserver (real @kubernetes/client-node calls).
 */
import {
  MCP_TARGET_GROUP,
  OWNER_ANNOTATION,
  type ApiProductSpec,
} from '@devportal/plugin-portal-common';
import type { FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { KubernetesPortalStore } from './KubernetesPortalStore';
import { MCP_TARGET_LABEL } from './labels';
import { storeOnFakeApiServer } from './testing';

const BOB = 'user:default/bob';
const ALICE = 'user:default/alice';
const DEVPORTAL = 'devportal.kuadrant.io/v1alpha1';
/** Generous: the fake API server starts with a fresh TLS certificate on a busy machine. */
const TEST_TIMEOUT_MS = 30_000;

function mcpSpec(name: string): ApiProductSpec {
  return {
    displayName: 'Example tools',
    targetRef: { group: MCP_TARGET_GROUP, kind: 'MCPServer', name },
    approvalMode: 'automatic',
    publishStatus: 'Published',
    plans: [{ tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } }],
  };
}

describe('KubernetesPortalStore and MCP targets', () => {
  let fake: FakeKubeApiServer;
  let store: KubernetesPortalStore;

  beforeEach(async () => {
    ({ fake, store } = await storeOnFakeApiServer());
  }, TEST_TIMEOUT_MS);

  afterEach(async () => {
    await fake?.close();
  }, TEST_TIMEOUT_MS);

  const createTools = () =>
    store.createProduct({
      namespace: 'toystore',
      name: 'tools',
      annotations: { [OWNER_ANNOTATION]: BOB },
      spec: mcpSpec('example'),
    });

  const labelsOf = (kind: string, name: string) =>
    fake.listObjects(DEVPORTAL, kind, 'toystore').find(o => o.metadata?.name === name)?.metadata
      ?.labels ?? {};

  it(
    'labels MCP products and their access requests with the target, hashed when too long',
    async () => {
      const long = `example-${'x'.repeat(60)}`;
      for (const [product, server] of [
        ['tools', 'example'],
        ['long', long],
      ]) {
        await store.createProduct({
          namespace: 'toystore',
          name: product,
          annotations: { [OWNER_ANNOTATION]: BOB },
          spec: mcpSpec(server),
        });
      }
      const key = await store.createKey({
        namespace: 'toystore',
        spec: {
          apiProductRef: { name: 'tools' },
          planTier: 'bronze',
          requestedBy: { userId: ALICE },
        },
        approval: { reviewedBy: 'system:automatic-approval' },
      });

      expect(labelsOf('APIProduct', 'tools')[MCP_TARGET_LABEL]).toBe('MCPServer.example');
      expect(labelsOf('APIKey', key.metadata.name)[MCP_TARGET_LABEL]).toBe('MCPServer.example');
      expect(labelsOf('APIProduct', 'long')[MCP_TARGET_LABEL]).toMatch(/^h[0-9a-f]{40}$/);
      // The store's own labels stay out of API answers.
      expect(key.metadata.labels).toBeUndefined();
      expect(
        (await store.listProducts({ targetKind: 'MCPServer', targetName: long })).map(
          p => p.metadata.name,
        ),
      ).toEqual(['long']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'reads grants and target-filtered products through the target label selector',
    async () => {
      await createTools();
      await store.createKey({
        namespace: 'toystore',
        spec: {
          apiProductRef: { name: 'tools' },
          planTier: 'bronze',
          requestedBy: { userId: ALICE },
        },
        approval: { reviewedBy: 'system:automatic-approval' },
      });
      fake.clearRequestLog();

      const grants = await store.listMcpGrantsPage(
        { targetKind: 'MCPServer', targetName: 'example' },
        new Date(),
        { limit: 10 },
      );
      await store.listProducts({ targetKind: 'MCPServer', targetName: 'example' });

      expect(grants.items).toHaveLength(1);
      const lists = fake.requests({ verb: 'list' });
      expect(lists.length).toBeGreaterThan(0);
      for (const list of lists) {
        expect(list.query.labelSelector).toBe(`${MCP_TARGET_LABEL}=MCPServer.example`);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "answers 400 naming the fix when the cluster's APIProduct CRD refuses MCP targets (an injected 422 as Kuadrant's CRD answers)",
    async () => {
      fake.failNext({ verb: 'create', resource: 'apiproducts' }, 422, {
        message:
          'APIProduct.devportal.kuadrant.io "tools" is invalid: spec.targetRef.kind: Unsupported value: "MCPServer": supported values: "HTTPRoute"',
      });

      await expect(createTools()).rejects.toMatchObject({
        name: 'InputError',
        message:
          "this cluster's APIProduct CRD does not accept MCP targets: install the CRDs of deploy/crds or use portal.storage: database",
      });

      // Any other 422 keeps the API server's own message.
      fake.failNext({ verb: 'create', resource: 'apiproducts' }, 422, {
        message:
          'APIProduct.devportal.kuadrant.io "tools" is invalid: spec.displayName: Required value',
      });
      await expect(createTools()).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringContaining('spec.displayName: Required value'),
      });
    },
    TEST_TIMEOUT_MS,
  );
});
