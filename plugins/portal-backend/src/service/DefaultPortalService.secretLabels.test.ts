/*
 * Approval gives the key's Secret the labels the gateway selects API keys by: the real
 * service over the Kubernetes store on the fake API server of @internal/fake-kube-apiserver
 * (no cluster runs on CI), with the toystore example manifests as the resource source.
 */
import path from 'node:path';
import { OWNER_ANNOTATION, type ApiKey } from '@devportal/plugin-portal-common';
import type { FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import { ManifestResourceSource } from '../resources/ManifestResourceSource';
import { storeOnFakeApiServer } from '../store/kubernetes/testing';
import { DefaultPortalService } from './DefaultPortalService';
import { refOfKey } from './records';
import { credentialsOf as as, testActors } from './__testUtils__/testActors';

const TEST_TIMEOUT_MS = 20_000;
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const ALICE = { userRef: 'user:default/alice', ownershipRefs: ['user:default/alice'] };
const BOB = { userRef: 'user:default/bob', ownershipRefs: ['user:default/bob'] };
const GATEWAY_LABELS = { app: 'toystore', 'authorino.kuadrant.io/managed-by': 'authorino' };

describe("DefaultPortalService: key Secret labels from the route's AuthPolicies (Kubernetes store on a fake API server)", () => {
  let fake: FakeKubeApiServer;
  let service: DefaultPortalService;

  // The first start in a worker loads @kubernetes/client-node (large, ESM): seconds on a busy
  // 2-core machine, so this hook gets more than Jest's default 5 s.
  beforeEach(async () => {
    const started = await storeOnFakeApiServer();
    fake = started.fake;
    service = DefaultPortalService.create({
      store: started.store,
      resources: await ManifestResourceSource.fromFiles([TOYSTORE]),
      actors: testActors([ALICE, BOB]),
    });
  }, TEST_TIMEOUT_MS);

  afterEach(async () => {
    await fake?.close();
  });

  const createProduct = (name: string, route: string, approvalMode: 'manual' | 'automatic') =>
    service.createProduct(as(BOB), {
      metadata: {
        namespace: 'toystore',
        name,
        annotations: { [OWNER_ANNOTATION]: BOB.userRef },
      },
      spec: {
        displayName: name,
        targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route },
        approvalMode,
        publishStatus: 'Published',
      },
    });

  const secretLabelsOf = (key: ApiKey) => {
    const secrets = fake
      .listObjects('v1', 'Secret', 'toystore')
      .filter(s => s.metadata!.ownerReferences?.[0]?.uid === key.metadata.uid);
    expect(secrets).toHaveLength(1);
    return secrets[0].metadata!.labels;
  };

  it(
    'labels the Secret of an approved key with app: toystore and the Authorino label',
    async () => {
      const product = await createProduct('toys', 'toystore', 'manual');
      const key = await service.createRequest(as(ALICE), {
        apiProductRef: product.metadata,
        planTier: 'gold',
      });
      const approved = await service.reviewRequest(as(BOB), refOfKey(key), 'approve');
      expect(approved.status?.phase).toBe('Approved');
      expect(secretLabelsOf(key)).toMatchObject(GATEWAY_LABELS);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'labels the Secret of an automatically approved key the same way',
    async () => {
      const product = await createProduct('toys', 'toystore', 'automatic');
      const key = await service.createRequest(as(ALICE), {
        apiProductRef: product.metadata,
        planTier: 'gold',
      });
      expect(key.status?.phase).toBe('Approved');
      expect(secretLabelsOf(key)).toMatchObject(GATEWAY_LABELS);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'adds no gateway labels for a route without an apiKey AuthPolicy',
    async () => {
      const product = await createProduct('admin', 'toystore-admin', 'manual');
      const key = await service.createRequest(as(ALICE), {
        apiProductRef: product.metadata,
        planTier: 'gold',
      });
      await service.reviewRequest(as(BOB), refOfKey(key), 'approve');
      const labels = secretLabelsOf(key)!;
      expect(labels.app).toBeUndefined();
      expect(labels['authorino.kuadrant.io/managed-by']).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );
});
