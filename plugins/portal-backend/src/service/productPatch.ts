/*
 * What a JSON merge patch (RFC 7396) of an API product does: applying it, and telling
 * whether it changes the owner or the target route (the two changes that need
 * `update.all`, a decision the authorized layer takes before the service applies the patch).
 */
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { OWNER_ANNOTATION } from '@devportal/plugin-portal-common';
import type { StoredApiProduct } from '../store/types';
import { productOwnerOf } from './records';
import type { ApiProductPatch } from './types';

/**
 * Normalises an entity ref: default namespace filled in and lower case, as entity refs
 * are case-insensitive (`group:Payments-Team` → `group:default/payments-team`), so that
 * owners compare equal in the store's filters.
 */
export function normalizeEntityRef(ref: string, field: string): string {
  try {
    return stringifyEntityRef(parseEntityRef(ref)).toLocaleLowerCase('en-US');
  } catch (error) {
    throw new InputError(
      `${field} must be an entity ref like "group:default/payments-team": ${(error as Error).message}`,
    );
  }
}

/** RFC 7396 JSON merge patch: objects merge recursively, `null` removes, the rest replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return patch;
  }
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else if (value !== undefined) {
      result[key] = applyMergePatch(result[key], value);
    }
  }
  return result;
}

/** What a product update would change that needs `update.all`. */
export interface ProductChangeSummary {
  changesOwner: boolean;
  changesTargetRef: boolean;
}

/** What applying `patch` to `current` would change among the guarded fields. */
export function summarizeProductPatch(
  current: StoredApiProduct,
  patch: ApiProductPatch,
): ProductChangeSummary {
  const newOwner = patch.metadata?.annotations?.[OWNER_ANNOTATION];
  const currentOwner = productOwnerOf(current);
  const changesOwner =
    newOwner !== undefined &&
    normalizeEntityRef(newOwner, `metadata.annotations["${OWNER_ANNOTATION}"]`) !==
      (currentOwner === undefined ? undefined : normalizeEntityRef(currentOwner, 'owner'));
  const newTarget = patch.spec?.targetRef;
  const changesTargetRef =
    newTarget !== undefined && newTarget !== null && newTarget.name !== current.spec.targetRef.name;
  return { changesOwner, changesTargetRef };
}
