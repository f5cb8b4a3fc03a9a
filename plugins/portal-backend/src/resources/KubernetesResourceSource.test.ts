/*
 * KubernetesResourceSource against the fake API server of @internal/fake-kube-apiserver
 * loaded with the development fixture (examples/toystore.yaml): it must serve the same
 * objects ManifestResourceSource serves from that file.
 */
import type { ReadOnlyObject } from '@devportal/plugin-portal-common';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { mockServices } from '@backstage/backend-test-utils';
import {
  startFakeKubeApiServer,
  wellKnownResources,
  type FakeKubeApiServer,
} from '@internal/fake-kube-apiserver';
import { createKubernetesApi } from '../store/kubernetes/kubernetesClient';
import type { ReadOnlyKind } from '../store/types';
import { walkPages } from '../store/testing/walkPages';
import { KubernetesResourceSource } from './KubernetesResourceSource';
import { ManifestResourceSource } from './ManifestResourceSource';

const TOYSTORE = resolve(__dirname, '../../../../examples/toystore.yaml');
const KINDS: ReadOnlyKind[] = ['HTTPRoute', 'PlanPolicy', 'AuthPolicy', 'RateLimitPolicy'];

/** What a manifest file cannot have: the server-assigned identity. */
function withoutServerFields(objects: ReadOnlyObject[]) {
  return objects.map(({ metadata, ...rest }) => {
    const { uid, resourceVersion, creationTimestamp, ...kept } = metadata;
    return { ...rest, metadata: kept };
  });
}

/** Starting a fake API server (a fresh certificate) can take seconds on a busy machine. */
const TEST_TIMEOUT_MS = 20_000;

describe('KubernetesResourceSource on a fake Kubernetes API server', () => {
  let fake: FakeKubeApiServer;
  const logger = mockServices.logger.mock();

  async function sourceFor(namespaces?: string[]) {
    const api = await createKubernetesApi({
      config: {
        source: { type: 'kubeconfig', path: await fake.writeKubeConfigFile() },
        requestTimeoutMs: 5_000,
        namespaces,
      },
      logger,
    });
    return KubernetesResourceSource.create({ api, namespaces, logger });
  }

  afterEach(async () => {
    await fake?.close();
  });

  it(
    'lists and gets the toystore fixture exactly like the manifest source',
    async () => {
      fake = await startFakeKubeApiServer();
      await fake.loadFile(TOYSTORE);
      fake.load([
        {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { namespace: 'elsewhere', name: 'other-route' },
          spec: { parentRefs: [{ name: 'external' }] },
        },
      ]);
      const source = await sourceFor();
      const manifests = await ManifestResourceSource.fromManifests([
        { source: 'toystore.yaml', text: await readFile(TOYSTORE, 'utf8') },
      ]);

      for (const kind of KINDS) {
        const fromCluster = await source.list(kind, { namespace: 'toystore' });
        expect(withoutServerFields(fromCluster)).toEqual(
          withoutServerFields(await manifests.list(kind, { namespace: 'toystore' })),
        );
        for (const object of fromCluster) {
          expect(object.metadata).toMatchObject({
            uid: expect.any(String),
            resourceVersion: expect.any(String),
            creationTimestamp: expect.any(String),
          });
          expect(object.metadata).not.toHaveProperty('managedFields');
        }
      }
      expect(
        (await source.list('HTTPRoute')).map(r => `${r.metadata.namespace}/${r.metadata.name}`),
      ).toEqual(['elsewhere/other-route', 'toystore/toystore', 'toystore/toystore-admin']);
      expect(
        await source.get('PlanPolicy', { namespace: 'toystore', name: 'toystore-plans' }),
      ).toMatchObject({
        spec: { plans: [{ tier: 'gold' }, { tier: 'silver' }, { tier: 'bronze' }] },
      });
      expect(
        await source.get('PlanPolicy', { namespace: 'toystore', name: 'nope' }),
      ).toBeUndefined();

      // Cluster-wide lists are one request each, in the group and version of the kind.
      expect(fake.requests({ verb: 'list', namespace: undefined }).map(r => r.path)).toContain(
        '/apis/gateway.networking.k8s.io/v1/httproutes',
      );
    },
    TEST_TIMEOUT_MS,
  );

  it('keeps to the namespace allow-list', async () => {
    fake = await startFakeKubeApiServer();
    await fake.loadFile(TOYSTORE);
    fake.load([
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { namespace: 'elsewhere', name: 'other-route' },
        spec: {},
      },
    ]);
    const source = await sourceFor(['toystore']);
    fake.clearRequestLog();
    expect((await source.list('HTTPRoute')).map(r => r.metadata.name)).toEqual([
      'toystore',
      'toystore-admin',
    ]);
    expect(await source.list('HTTPRoute', { namespace: 'elsewhere' })).toEqual([]);
    expect(
      await source.get('HTTPRoute', { namespace: 'elsewhere', name: 'other-route' }),
    ).toBeUndefined();
    expect(fake.requests().map(r => r.path)).toEqual([
      '/apis/gateway.networking.k8s.io/v1/namespaces/toystore/httproutes',
    ]);
  });

  it(
    "pages a kind with the API server's limit and continue, namespace by namespace",
    async () => {
      fake = await startFakeKubeApiServer();
      await fake.loadFile(TOYSTORE);
      fake.load(
        ['a', 'b', 'c'].map(name => ({
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          metadata: { namespace: 'elsewhere', name },
          spec: {},
        })),
      );
      const walk = async (namespaces?: string[]) => {
        const source = await sourceFor(namespaces);
        const pages = await walkPages(page => source.listPage('HTTPRoute', {}, page), 2);
        return pages.flat().map(r => `${r.metadata.namespace}/${r.metadata.name}`);
      };
      const inServerOrder = [
        'elsewhere/a',
        'elsewhere/b',
        'elsewhere/c',
        'toystore/toystore',
        'toystore/toystore-admin',
      ];
      fake.clearRequestLog();
      expect(await walk()).toEqual(inServerOrder);
      expect(fake.requests({ verb: 'list' }).every(r => r.query.limit !== undefined)).toBe(true);
      expect(await walk(['toystore', 'elsewhere'])).toEqual(inServerOrder);
      const source = await sourceFor();
      expect(
        (await source.listPage('HTTPRoute', { namespace: 'toystore' }, { limit: 5 })).cursor,
      ).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );

  it('lists none of a kind whose CRD is not installed, and says so once in the log', async () => {
    fake = await startFakeKubeApiServer({
      resources: wellKnownResources().filter(r => r.kind !== 'PlanPolicy'),
    });
    const source = await sourceFor();
    expect(await source.list('PlanPolicy')).toEqual([]);
    expect(await source.list('PlanPolicy', { namespace: 'toystore' })).toEqual([]);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('PlanPolicy'));
  });

  it('answers 503 when the cluster fails, rather than an empty list', async () => {
    fake = await startFakeKubeApiServer();
    const source = await sourceFor();
    fake.failNext({ verb: 'list', resource: 'authpolicies' }, 503);
    await expect(source.list('AuthPolicy')).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
    });
  });
});
