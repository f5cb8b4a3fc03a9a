import type {
  ApiKeyPhase,
  ApiProductSpec,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  UpdateApiKeyRequest,
} from '@devportal/plugin-portal-common';

/** The signed-in user a business operation acts for. */
export interface PortalActor {
  /** The user's entity ref, e.g. `user:default/alice`. */
  userRef: string;
  /** The user's ref and its groups (from `userInfo`), all normalised. */
  ownershipRefs: string[];
}

/** A decision on a Pending key. */
export type ReviewDecision = 'approve' | 'reject';

/**
 * A JSON merge patch (RFC 7396) of an API product: `null` removes optional fields.
 * Only `spec` fields, `metadata.labels`, the owner annotation and a `resourceVersion`
 * precondition may appear (the router enforces the shape).
 */
export interface ApiProductPatch {
  metadata?: {
    labels?: Record<string, string | null> | null;
    annotations?: { 'backstage.io/owner'?: string };
    resourceVersion?: string;
  };
  spec?: { [K in keyof ApiProductSpec]?: ApiProductSpec[K] | null };
}

/** Query of `GET /requests`; `ownedBy` narrows it to keys the caller owns (`.own`). */
export interface RequestQuery {
  status?: ApiKeyPhase;
  namespace?: string;
  /** Keys requested by `userRef` or for a product one of `ownershipRefs` owns. */
  ownedBy?: { userRef: string; ownershipRefs: string[] };
}

export type { CreateApiKeyRequest, CreateApiProductRequest, UpdateApiKeyRequest };
