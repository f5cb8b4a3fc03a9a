/*
 * The signed-in person's user ref and ownership refs (their groups), from the identity API: what
 * decides whether a `.own` permission covers a record (its owner annotation, or a key's
 * requester). Only for showing or hiding actions: the server decides again on every call.
 */
import { identityApiRef, useApi } from '@backstage/frontend-plugin-api';
import { OWNER_ANNOTATION, type ApiKey, type ApiProduct } from '@devportal/plugin-portal-common';
import { useAsyncData } from './useAsyncData';

/** Who is signed in, for `.own` decisions. */
export interface Ownership {
  userRef: string;
  /** The user ref and every group ref the user belongs to. */
  refs: ReadonlySet<string>;
}

/** The signed-in person's ownership; `undefined` while loading. */
export function useOwnership(): Ownership | undefined {
  const identityApi = useApi(identityApiRef);
  const { value } = useAsyncData(async () => {
    const identity = await identityApi.getBackstageIdentity();
    return {
      userRef: identity.userEntityRef,
      refs: new Set([identity.userEntityRef, ...identity.ownershipEntityRefs]),
    };
  }, [identityApi]);
  return value;
}

/** Whether the person owns the product (its owner annotation is one of their refs). */
export function ownsProduct(ownership: Ownership | undefined, product: ApiProduct): boolean {
  const owner = product.metadata.annotations?.[OWNER_ANNOTATION];
  return ownership !== undefined && owner !== undefined && ownership.refs.has(owner);
}

/** Whether the person requested the key. */
export function requestedKey(ownership: Ownership | undefined, key: ApiKey): boolean {
  return ownership !== undefined && key.spec.requestedBy.userId === ownership.userRef;
}
