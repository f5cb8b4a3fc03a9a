import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { createKubernetesApi } from './kubernetesClient';
import {
  DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  readKubernetesStoreConfig,
} from './kubernetesConfig';

const read = (kubernetes?: any) =>
  readKubernetesStoreConfig(new ConfigReader({ portal: { storage: 'kubernetes', kubernetes } }));

// Building the client contacts no server: the address is one that cannot resolve (RFC 6761).
const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: c1
    cluster: { server: 'https://kubernetes.invalid' }
users:
  - name: u1
    user: { token: t }
contexts:
  - name: first
    context: { cluster: c1, user: u1 }
  - name: second
    context: { cluster: c1, user: u1, namespace: team-a }
current-context: first
`;

describe('portal.kubernetes config', () => {
  it('defaults to the client defaults, 10 s timeouts and every namespace', () => {
    expect(read()).toEqual({
      source: { type: 'default', context: undefined },
      requestTimeoutMs: DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
      namespaces: undefined,
    });
  });

  it('reads a kubeconfig path and context, a duration and an allow-list', () => {
    expect(
      read({
        kubeconfig: '/k/config',
        context: 'second',
        requestTimeout: { seconds: 3 },
        namespaces: ['toystore', 'b', 'toystore'],
      }),
    ).toEqual({
      source: { type: 'kubeconfig', path: '/k/config', context: 'second' },
      requestTimeoutMs: 3_000,
      namespaces: ['b', 'toystore'],
    });
    expect(read({ inCluster: true }).source).toEqual({ type: 'in-cluster' });
    expect(read({ requestTimeout: '2s' }).requestTimeoutMs).toBe(2_000);
  });

  it('refuses contradictory or malformed values with a message naming the key', () => {
    expect(() => read({ inCluster: true, kubeconfig: '/x' })).toThrow(
      /inCluster cannot be combined/,
    );
    expect(() => read({ namespaces: [] })).toThrow(/at least one namespace/);
    expect(() => read({ namespaces: ['Not_A_Namespace'] })).toThrow(
      /"Not_A_Namespace" is not a namespace name/,
    );
    expect(() => read({ requestTimeout: 'soon' })).toThrow(/requestTimeout/);
  });

  it('builds the client at start, failing clearly for a missing file or an unknown context', async () => {
    const logger = mockServices.logger.mock();
    const dir = mkdtempSync(join(tmpdir(), 'portal-kubeconfig-'));
    const path = join(dir, 'config');
    writeFileSync(path, KUBECONFIG);
    const start = (kubernetes: any) => createKubernetesApi({ config: read(kubernetes), logger });

    await expect(start({ kubeconfig: path, context: 'second' })).resolves.toMatchObject({
      requestTimeoutMs: DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
    });
    await expect(start({ kubeconfig: join(dir, 'missing') })).rejects.toThrow(
      /portal.kubernetes.kubeconfig .*missing cannot be read/,
    );
    await expect(start({ kubeconfig: path, context: 'third' })).rejects.toThrow(
      'portal.kubernetes.context "third" is not in the kubeconfig (contexts: first, second)',
    );
  });
});
