import { InputError } from '@backstage/errors';
import { OWNER_ANNOTATION, type ObjectRef } from '@devportal/plugin-portal-common';

/** `namespace/name`, for error messages of both stores. */
export function refText(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** The owner entity ref of a product; InputError when the annotation is missing or empty. */
export function ownerOf(annotations: Record<string, string> | undefined): string {
  const owner = annotations?.[OWNER_ANNOTATION];
  if (owner === undefined || owner === '') {
    throw new InputError(
      `An API product needs the annotation ${OWNER_ANNOTATION} (its owner's entity ref)`,
    );
  }
  return owner;
}
