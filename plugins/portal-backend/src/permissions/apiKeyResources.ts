/*
 * Loads `portal-apikey` resources for the permission framework (the `getResources` of the
 * resource type registered in plugin.ts): a key and its product's owner, by the key's
 * `namespace/name` resource ref. Read straight from the store: this is the framework
 * asking, not a caller.
 */
import type { PortalStore } from '../store/types';
import type { PortalApiKeyResource } from './rules';
import { OWNER_ANNOTATION } from '@devportal/plugin-portal-common';

/** The key named by `resourceRef`; undefined for a malformed ref or a missing key. */
export async function loadApiKeyResource(
  store: Pick<PortalStore, 'getKey' | 'getProduct'>,
  resourceRef: string,
): Promise<PortalApiKeyResource | undefined> {
  const [namespace, name, ...rest] = resourceRef.split('/');
  if (!namespace || !name || rest.length > 0) {
    return undefined;
  }
  const apiKey = await store.getKey({ namespace, name });
  if (!apiKey) return undefined;
  const product = await store.getProduct({
    namespace,
    name: apiKey.spec.apiProductRef.name,
  });
  return {
    apiKey,
    productOwnerRef: product?.metadata.annotations?.[OWNER_ANNOTATION],
  };
}
