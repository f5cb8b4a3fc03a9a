/*
 * How the portal's records map to Kubernetes objects and back:
 *
 * - APIProduct (`devportal.kuadrant.io/v1alpha1`): `spec` as in the API; the caller's
 *   labels plus the encoded owner label; the caller's annotations (with
 *   `backstage.io/owner`). No status is stored (`status.plans` is derived).
 * - APIKey (same group): `spec` as in the API (an access request of an MCP product gets
 *   `spec.mcpTarget` from its product); labels for requester, product and MCP target; an
 *   ownerReference to its APIProduct (so a product deleted with kubectl takes its keys
 *   along); server-managed state in the `status` subresource, plus `status.secretRef`,
 *   the name of the Secret holding the key (kept out of API answers).
 * - The key itself: a core Secret `<apikey>-xxxxx` owned by the APIKey, `data.api_key`
 *   (base64), immutable, labelled with the APIKey's uid.
 *
 * The store's own labels and annotations (labels.ts) never appear in API answers.
 */
import {
  DEVPORTAL_API_VERSION,
  type ApiKey,
  type ApiKeyPhase,
  type ApiKeySpec,
  type ApiKeyStatus,
} from '@devportal/plugin-portal-common';
import type { StoredApiProduct } from '../types';
import type { CustomResourceType, KubeObject } from './kubernetesClient';
import { withoutReservedKeys } from './labels';

const DEVPORTAL_GROUP = 'devportal.kuadrant.io';
const DEVPORTAL_VERSION = 'v1alpha1';

/** The APIProduct custom resource. */
export const API_PRODUCTS: CustomResourceType = {
  group: DEVPORTAL_GROUP,
  version: DEVPORTAL_VERSION,
  plural: 'apiproducts',
  kind: 'APIProduct',
};

/** The APIKey custom resource. */
export const API_KEYS: CustomResourceType = {
  group: DEVPORTAL_GROUP,
  version: DEVPORTAL_VERSION,
  plural: 'apikeys',
  kind: 'APIKey',
};

/** The Secret key that holds the API key (what Authorino reads). */
export const API_KEY_SECRET_FIELD = 'api_key';

/** The status as stored: the API's fields plus the name of the key's Secret. */
export interface StoredKeyStatus extends Partial<ApiKeyStatus> {
  secretRef?: { name: string };
}

function timestamp(value: string | Date | undefined): string {
  if (value instanceof Date) {
    return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return value ?? '';
}

function baseMetadata(object: KubeObject) {
  const labels = withoutReservedKeys(object.metadata.labels);
  const annotations = withoutReservedKeys(object.metadata.annotations);
  return {
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name ?? '',
    uid: object.metadata.uid ?? '',
    resourceVersion: object.metadata.resourceVersion ?? '',
    creationTimestamp: timestamp(object.metadata.creationTimestamp),
    ...(labels !== undefined && { labels }),
    ...(annotations !== undefined && { annotations }),
  };
}

/** An APIProduct object as the store returns it. */
export function productFromObject(object: KubeObject): StoredApiProduct {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIProduct',
    metadata: baseMetadata(object),
    spec: object.spec,
  };
}

/** A key's phase; an APIKey whose status was never written is Pending (see createKey). */
export function phaseOf(object: KubeObject): ApiKeyPhase {
  return (object.status as StoredKeyStatus | undefined)?.phase ?? 'Pending';
}

/** An APIKey object as the store returns it (never its Secret's name or value). */
export function keyFromObject(object: KubeObject): ApiKey {
  const stored = (object.status ?? {}) as StoredKeyStatus;
  const status: ApiKeyStatus = {
    phase: stored.phase ?? 'Pending',
    ...(stored.reviewedBy !== undefined && { reviewedBy: stored.reviewedBy }),
    ...(stored.reviewedAt !== undefined && { reviewedAt: stored.reviewedAt }),
    ...(stored.reason !== undefined && { reason: stored.reason }),
    secretRevealed: stored.secretRevealed ?? false,
    ...(stored.secretRevealedAt !== undefined && {
      secretRevealedAt: stored.secretRevealedAt,
    }),
  };
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind: 'APIKey',
    metadata: baseMetadata(object),
    spec: keySpec(object.spec),
    status,
  };
}

/** A key spec with exactly the API's fields, absent ones left out (never null). */
export function keySpec(spec: ApiKeySpec): ApiKeySpec {
  return {
    apiProductRef: { name: spec.apiProductRef.name },
    planTier: spec.planTier,
    ...(spec.useCase !== undefined && { useCase: spec.useCase }),
    requestedBy: {
      userId: spec.requestedBy.userId,
      ...(spec.requestedBy.email !== undefined && {
        email: spec.requestedBy.email,
      }),
    },
    ...(spec.expiresAt !== undefined && { expiresAt: spec.expiresAt }),
    ...(spec.mcpTarget !== undefined && {
      mcpTarget: { kind: spec.mcpTarget.kind, name: spec.mcpTarget.name },
    }),
  };
}

/** An ownerReference to `owner` (of the given kind), for garbage collection. */
export function ownerReferenceTo(owner: KubeObject, kind: string) {
  return {
    apiVersion: DEVPORTAL_API_VERSION,
    kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
  };
}

/** A timestamp in RFC 3339 for status fields. */
export function nowTimestamp(): string {
  return new Date().toISOString();
}
