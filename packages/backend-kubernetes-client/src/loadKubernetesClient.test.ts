/*
 * Loading the kubeconfig, and the per-call options, against the fake Kubernetes API server (no
 * cluster runs here; real client-node over HTTPS).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeKubeApiServer, startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import { kubernetesApiStatusOf, isTimeoutOrNetworkError } from './kubernetesFailures';
import { loadKubernetesClient } from './loadKubernetesClient';
import { mergePatchOptions, requestTimeoutOptions } from './requestOptions';

const NS = 'team';
const configMaps = (fake: FakeKubeApiServer) => fake.requests({ resource: 'configmaps' });

describe('loadKubernetesClient', () => {
  let fake: FakeKubeApiServer;
  let dir: string;

  beforeAll(async () => {
    fake = await startFakeKubeApiServer({ namespaces: [NS] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
    // The first load of client-node (an ES module through require) takes seconds under Jest.
    loadKubernetesClient({ type: 'kubeconfig', path: await fake.writeKubeConfigFile() }, 'x');
  }, 30_000);
  afterAll(async () => {
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails at once, naming the key, for a file it cannot read or an unknown context', async () => {
    expect(() =>
      loadKubernetesClient({ type: 'kubeconfig', path: path.join(dir, 'missing') }, 'x.kubernetes'),
    ).toThrow(/^x\.kubernetes\.kubeconfig .*missing cannot be read/);
    const file = await fake.writeKubeConfigFile();
    expect(() =>
      loadKubernetesClient({ type: 'kubeconfig', path: file, context: 'nope' }, 'x.kubernetes'),
    ).toThrow(/^x\.kubernetes\.context "nope" is not in the kubeconfig \(contexts: .+\)$/);
  });

  it('refuses a kubeconfig without a current cluster', () => {
    const file = path.join(dir, 'empty');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubernetesClient({ type: 'kubeconfig', path: file }, 'x.kubernetes')).toThrow(
      'The kubeconfig for x.kubernetes has no current cluster; ' +
        'set x.kubernetes.context or inCluster',
    );
  });

  it('builds clients that reach the API server, with merge patches and API errors', async () => {
    const file = await fake.writeKubeConfigFile();
    const { lib, kubeConfig } = loadKubernetesClient({ type: 'kubeconfig', path: file }, 'x');
    const core = kubeConfig.makeApiClient(lib.CoreV1Api);
    await core.createNamespacedConfigMap(
      { namespace: NS, body: { metadata: { name: 'm' }, data: { a: '1' } } },
      requestTimeoutOptions(lib, 5_000),
    );
    const patched = await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'm', body: { data: { b: '2' } } },
      mergePatchOptions(lib, 5_000),
    );
    expect(patched.data).toEqual({ a: '1', b: '2' });
    expect(configMaps(fake).at(-1)?.contentType).toMatch(/^application\/merge-patch\+json/);

    const error = await core
      .createNamespacedConfigMap(
        { namespace: NS, body: { metadata: { name: 'm' } } },
        requestTimeoutOptions(lib, 5_000),
      )
      .catch(e => e);
    expect(kubernetesApiStatusOf(error)).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    expect(isTimeoutOrNetworkError(error)).toBe(false);
  });

  it('aborts a call the API server does not answer within the timeout', async () => {
    const file = await fake.writeKubeConfigFile();
    const { lib, kubeConfig } = loadKubernetesClient({ type: 'kubeconfig', path: file }, 'x');
    const core = kubeConfig.makeApiClient(lib.CoreV1Api);
    const hang = fake.hangNext({ resource: 'configmaps', verb: 'get' });
    const error = await core
      .readNamespacedConfigMap({ namespace: NS, name: 'm' }, requestTimeoutOptions(lib, 200))
      .catch(e => e);
    hang.remove();
    expect(kubernetesApiStatusOf(error)).toBeUndefined();
    expect(isTimeoutOrNetworkError(error)).toBe(true);
  });
});
