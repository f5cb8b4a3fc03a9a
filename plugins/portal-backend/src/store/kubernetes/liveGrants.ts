/*
 * Which APIKey objects are live access grants (Approved, unexpired), and how many of one
 * product's keys of a tier are: read by the grant list and count (KubernetesMcpGrants.ts) and
 * by a product replace that drops a tier (KubernetesProductStore.ts).
 */
import type { ApiKeySpec, ObjectRef } from '@devportal/plugin-portal-common';
import { isExpiryDue } from '../expiryDue';
import { phaseOf } from './customResources';
import type { KubeObject } from './kubernetesClient';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';

/** Whether an APIKey is a live grant at `now` (before the exact filter checks). */
export function isLiveAt(key: KubeObject, now: Date): boolean {
  const spec = key.spec as ApiKeySpec | undefined;
  return phaseOf(key) === 'Approved' && !isExpiryDue(spec?.expiresAt, now);
}

/** How many keys of `product` with plan tier `tier` are live at `now` (`PortalStore.countLiveGrants`). */
export async function countLiveKeysOfTier(
  keys: KubernetesKeyObjects,
  product: ObjectRef,
  tier: string,
  now: Date,
): Promise<number> {
  const ofProduct = await keys.ofProduct(product);
  return ofProduct.filter(key => key.spec?.planTier === tier && isLiveAt(key, now)).length;
}
