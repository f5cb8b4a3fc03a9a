/*
 * Small facts about portal records that both service layers need: how a record is named in
 * messages, who owns a product, and the 404s. Neither layer owns these, so that
 * AuthorizedPortalService and DefaultPortalService do not import each other's helpers.
 */
import { NotFoundError } from '@backstage/errors';
import { OWNER_ANNOTATION, type ApiKey, type ObjectRef } from '@devportal/plugin-portal-common';

/** Formats `namespace/name` for messages. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** The `{namespace, name}` of a key. */
export function refOfKey(key: ApiKey): ObjectRef {
  return { namespace: key.metadata.namespace, name: key.metadata.name };
}

/** The ref of a key's product (keys live in their product's namespace). */
export function productRefOfKey(key: ApiKey): ObjectRef {
  return { namespace: key.metadata.namespace, name: key.spec.apiProductRef.name };
}

/** The owner of a product (its owner annotation), if any. */
export function productOwnerOf(product: {
  metadata: { annotations?: Record<string, string> };
}): string | undefined {
  return product.metadata.annotations?.[OWNER_ANNOTATION];
}

export function productNotFound(ref: ObjectRef): NotFoundError {
  return new NotFoundError(`APIProduct ${describeRef(ref)} not found`);
}

export function keyNotFound(ref: ObjectRef): NotFoundError {
  return new NotFoundError(`APIKey ${describeRef(ref)} not found`);
}
