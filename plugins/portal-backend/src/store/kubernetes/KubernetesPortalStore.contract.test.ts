import { runPortalStoreContract } from '../testing/portalStoreContract';
import { storeOnFakeApiServer } from './testing';

// The shared contract, on custom resources served by the fake API server of
// @internal/fake-kube-apiserver (HTTPS, real @kubernetes/client-node calls).
runPortalStoreContract('KubernetesPortalStore on a fake Kubernetes API server', async () => {
  const { fake, store } = await storeOnFakeApiServer();
  let closed = false;
  const close = async () => {
    if (!closed) {
      closed = true;
      await fake.close();
    }
  };
  return { store, cleanup: close, makeUnavailable: close };
});
