/*
 * Expiry announcements of the Kubernetes store (contract mcp-access §3.5, §4.5): an Approved
 * APIKey whose `spec.expiresAt` has passed is claimed by writing the annotation
 * `portal.backstage.io/expiry-announced` with a merge patch on the resourceVersion read, so of
 * concurrent claimers (replicas) exactly one wins; the others get 409, read the key again and
 * see the annotation.
 *
 * Cost: the phase lives in the status subresource and the expiry in the spec, neither of
 * which can be a label kept up to date in the same write, so a run lists the APIKeys of the
 * served namespaces and checks them here. The task runs once a minute on one replica at a
 * time; a cluster with very many keys should prefer the database store.
 */
import type { ApiKey } from '@devportal/plugin-portal-common';
import { isExpiryDue } from '../expiryDue';
import { API_KEYS, keyFromObject, nowTimestamp, phaseOf } from './customResources';
import { isConflict, isNotFound } from './errorChecks';
import { MAX_CAS_ATTEMPTS } from './keyCompareAndSet';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';
import { EXPIRY_ANNOUNCED_ANNOTATION } from './labels';
import type { ServedNamespaces } from './ServedNamespaces';

/** Claims the expiry announcements of APIKeys; see the file comment. */
export class KubernetesKeyExpiryClaims {
  constructor(
    private readonly api: KubernetesApi,
    private readonly namespaces: ServedNamespaces,
    private readonly keys: KubernetesKeyObjects,
  ) {}

  /** See `PortalStore.claimExpiryAnnouncements`. */
  async claim(now: Date, limit: number): Promise<ApiKey[]> {
    const objects = await this.api.listCustom(API_KEYS, {
      namespaces: this.namespaces.scope(undefined),
    });
    const due = objects
      .filter(object => isUnannouncedExpiry(object, now))
      .sort((a, b) => Date.parse(a.spec.expiresAt) - Date.parse(b.spec.expiresAt));
    const claimedAt = nowTimestamp();
    const claimed: ApiKey[] = [];
    for (const object of due) {
      if (claimed.length >= limit) break;
      const won = await this.#claimOne(object, now, claimedAt);
      if (won !== undefined) claimed.push(keyFromObject(won));
    }
    return claimed;
  }

  /** The key after this caller's claim, or undefined when another claimer (or a delete) won. */
  async #claimOne(first: KubeObject, now: Date, claimedAt: string) {
    const ref = { namespace: first.metadata.namespace!, name: first.metadata.name! };
    let current: KubeObject | undefined = first;
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      if (current === undefined || !isUnannouncedExpiry(current, now)) return undefined;
      try {
        return await this.api.mergePatchCustom(API_KEYS, ref.namespace, ref.name, {
          metadata: {
            resourceVersion: current.metadata.resourceVersion,
            annotations: { [EXPIRY_ANNOUNCED_ANNOTATION]: claimedAt },
          },
        });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        if (!isConflict(error)) throw error;
        current = await this.keys.read(ref);
      }
    }
    // The key kept changing under unrelated writes: the next run tries again.
    return undefined;
  }
}

/** Approved, `expiresAt` at or before `now`, not announced yet. */
function isUnannouncedExpiry(object: KubeObject, now: Date): boolean {
  return (
    phaseOf(object) === 'Approved' &&
    object.metadata.annotations?.[EXPIRY_ANNOUNCED_ANNOTATION] === undefined &&
    isExpiryDue(object.spec?.expiresAt, now)
  );
}
