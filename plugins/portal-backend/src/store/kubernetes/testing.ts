/*
 * Test helpers: a KubernetesPortalStore built from config exactly as the plugin builds
 * it, pointed at the fake API server of @internal/fake-kube-apiserver (no cluster runs
 * on CI). Only for tests.
 */
import { ConfigReader } from '@backstage/config';
// eslint-disable-next-line @backstage/no-undeclared-imports -- test-only helper: a devDependency
import { mockServices } from '@backstage/backend-test-utils';
// eslint-disable-next-line @backstage/no-undeclared-imports -- test-only helper: a devDependency
import { startFakeKubeApiServer, type FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import { KubernetesPortalStore } from './KubernetesPortalStore';
import { readKubernetesStoreConfig } from './kubernetesConfig';

/** Namespaces the contract suite uses. */
export const TEST_NAMESPACES = ['toystore', 'other'];

/** A fake API server and a store built from a kubeconfig file pointing at it. */
export async function storeOnFakeApiServer(
  options: {
    kubernetes?: Record<string, unknown>;
    logger?: ReturnType<typeof mockServices.logger.mock>;
  } = {},
): Promise<{
  fake: FakeKubeApiServer;
  store: KubernetesPortalStore;
  logger: ReturnType<typeof mockServices.logger.mock>;
}> {
  const fake = await startFakeKubeApiServer({ namespaces: TEST_NAMESPACES });
  const kubeconfig = await fake.writeKubeConfigFile();
  const logger = options.logger ?? mockServices.logger.mock();
  const config = readKubernetesStoreConfig(
    new ConfigReader({
      portal: { storage: 'kubernetes', kubernetes: { kubeconfig, ...options.kubernetes } },
    }),
  );
  const store = await KubernetesPortalStore.create({ config, logger });
  return { fake, store, logger };
}
