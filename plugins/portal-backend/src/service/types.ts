import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  RequestListQuery,
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

/** Query of `GET /requests`; `ownedBy` narrows it to keys the caller owns (`.own`). */
export interface RequestQuery extends RequestListQuery {
  /** Keys requested by `userRef` or for a product one of `ownershipRefs` owns. */
  ownedBy?: { userRef: string; ownershipRefs: string[] };
}

/*
 * The bodies the service takes are the contract's request types (inferred from the schemas
 * the router validates with), not copies of them.
 */
export type { ApiProductPatch, CreateApiKeyRequest, CreateApiProductRequest, UpdateApiKeyRequest };
