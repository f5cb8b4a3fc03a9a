/*
 * "One Pending request per requester, product and plan tier" without a unique index.
 *
 * Kubernetes has no unique constraint across objects, and key names must stay random
 * (a requester may hold several non-Pending keys for the same tier), so the unique
 * part is a claim: a ConfigMap in the key's namespace whose name is derived from
 * (requester, product, tier). Creating an object is atomic (409 AlreadyExists), so of
 * any number of concurrent requests exactly one creates the claim.
 *
 * Claims are never released explicitly: a claim is live only while the key it names
 * (name and uid) exists, is Pending and still has the claim's tier. A stale claim is
 * taken over by deleting it with uid + resourceVersion preconditions (so two takers
 * cannot both succeed) and creating it again. Claims are owned by their key, so the
 * garbage collector removes them with it.
 *
 * One race needs a fence: a key being edited to the claim's tier reads as "Pending
 * with another tier" (stale) until its edit lands. Before taking such a claim over,
 * the taker bumps that key's resourceVersion; the edit, a compare-and-set on the old
 * version, then fails and retries, and on its retry finds the claim taken.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ConflictError, isError } from '@backstage/errors';
import { API_KEYS, ownerReferenceTo, phaseOf } from './customResources';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import { AlreadyExistsError } from './AlreadyExistsError';
import {
  CLAIM_LABEL,
  KEY_UID_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  RESERVED_PREFIX,
} from './labels';

/** Annotation a claim taker writes on a key to fence its in-flight edit. */
export const FENCE_ANNOTATION = `${RESERVED_PREFIX}claim-fence`;
/** Takeover attempts before giving up with a ConflictError (each needs a racing writer). */
const MAX_CLAIM_ATTEMPTS = 10;

/** What a claim is about. */
export interface PendingTriple {
  requester: string;
  product: string;
  planTier: string;
}

/** The claim's name: deterministic, a valid object name, no user text in it. */
export function claimName(triple: PendingTriple): string {
  const hash = createHash('sha256')
    .update(`${triple.requester}\u0000${triple.product}\u0000${triple.planTier}`)
    .digest('hex')
    .slice(0, 40);
  return `apikey-pending-${hash}`;
}

function tripleOf(key: KubeObject): PendingTriple {
  return {
    requester: key.spec.requestedBy.userId,
    product: key.spec.apiProductRef.name,
    planTier: key.spec.planTier,
  };
}

function sameTriple(a: PendingTriple, b: PendingTriple): boolean {
  return a.requester === b.requester && a.product === b.product && a.planTier === b.planTier;
}

/** The ConflictError for a duplicate Pending request. */
export function duplicatePendingError(namespace: string, triple: PendingTriple): ConflictError {
  return new ConflictError(
    `${triple.requester} already has a Pending request for API product ${namespace}/${triple.product} with plan tier ${triple.planTier}`,
  );
}

/** Whether a Kubernetes write failed because the object changed or vanished meanwhile. */
function isRace(error: unknown): boolean {
  return isError(error) && (error.name === 'ConflictError' || error.name === 'NotFoundError');
}

/**
 * Makes `key` the holder of the Pending claim for `triple` (its own triple, or the one
 * an edit is about to give it). Throws the duplicate ConflictError when another key
 * holds it and is still Pending for that triple.
 */
export async function acquirePendingClaim(
  api: KubernetesApi,
  key: KubeObject,
  triple: PendingTriple,
): Promise<void> {
  const namespace = key.metadata.namespace!;
  const name = claimName(triple);
  const body: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      labels: {
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [CLAIM_LABEL]: 'pending-apikey',
        [KEY_UID_LABEL]: key.metadata.uid!,
      },
      ownerReferences: [ownerReferenceTo(key, 'APIKey')],
    },
    data: {
      requester: triple.requester,
      product: triple.product,
      planTier: triple.planTier,
      apiKeyName: key.metadata.name!,
      apiKeyUid: key.metadata.uid!,
    },
  };

  for (let attempt = 1; attempt <= MAX_CLAIM_ATTEMPTS; attempt++) {
    try {
      await api.createConfigMap(namespace, body);
      return;
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) {
        throw error;
      }
    }
    const claim = await api.readConfigMap(namespace, name);
    if (claim === undefined) {
      continue; // taken over and deleted meanwhile: try to create it again
    }
    const holderUid = claim.data?.apiKeyUid;
    if (holderUid === key.metadata.uid) {
      return;
    }
    const holder = await api.getCustom(API_KEYS, namespace, claim.data?.apiKeyName ?? '');
    if (
      holder !== undefined &&
      holder.metadata.uid === holderUid &&
      phaseOf(holder) === 'Pending'
    ) {
      if (sameTriple(tripleOf(holder), triple)) {
        throw duplicatePendingError(namespace, triple);
      }
      // Pending with another tier: maybe an edit towards this tier is in flight. Fence it.
      try {
        await api.mergePatchCustom(API_KEYS, namespace, holder.metadata.name!, {
          metadata: {
            resourceVersion: holder.metadata.resourceVersion,
            annotations: { [FENCE_ANNOTATION]: randomUUID() },
          },
        });
      } catch (error) {
        if (isRace(error)) {
          continue; // the holder changed: look again
        }
        throw error;
      }
    }
    try {
      await api.deleteConfigMap(namespace, name, {
        uid: claim.metadata.uid,
        resourceVersion: claim.metadata.resourceVersion,
      });
    } catch (error) {
      if (!isRace(error)) {
        throw error;
      }
    }
  }
  throw new ConflictError(
    `The Pending request slot for API product ${namespace}/${triple.product}, plan tier ${triple.planTier} is changing concurrently; retry`,
  );
}
