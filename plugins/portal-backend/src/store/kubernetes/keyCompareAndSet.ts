/*
 * The pieces of a compare-and-set on an APIKey: read the key, check its phase, write
 * with `metadata.resourceVersion` of that read; a 409 means someone else wrote first,
 * so read again and decide again (the second read sees their phase: ConflictError).
 * Used by the key request store (edits, reviews) and the key Secrets (the reveal).
 */
import { ConflictError, NotFoundError } from '@backstage/errors';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import { refText } from '../productOwner';
import { phaseOf } from './customResources';
import { isConflict, isNotFound } from './errorChecks';
import type { KubeObject } from './kubernetesClient';

/**
 * Compare-and-set rounds before answering ConflictError. Each lost round means another
 * writer's change landed; after it the phase check usually decides (e.g. "already
 * revealed"), so more than a few rounds only happen under unrelated heavy churn.
 */
export const MAX_CAS_ATTEMPTS = 20;

/** The NotFoundError of a missing API key. */
export function keyNotFound(ref: ObjectRef): NotFoundError {
  return new NotFoundError(`API key ${refText(ref)} not found`);
}

/**
 * Classifies the failure of a key's compare-and-set write: returns when another writer won
 * (409: read again and retry), throws otherwise (404: the key was deleted meanwhile).
 */
export function rethrowUnlessLostRace(ref: ObjectRef, error: unknown): void {
  if (isNotFound(error)) {
    throw keyNotFound(ref);
  }
  if (!isConflict(error)) {
    throw error;
  }
}

/** ConflictError naming the current phase when `key` is not in the `expected` one. */
export function assertKeyPhase(
  ref: ObjectRef,
  key: KubeObject,
  expected: string,
  verb: string,
): void {
  const phase = phaseOf(key);
  if (phase !== expected) {
    throw new ConflictError(
      `API key ${refText(ref)} is ${phase}, not ${expected}: it can no longer be ${verb}`,
    );
  }
}

/** The ConflictError after {@link MAX_CAS_ATTEMPTS} lost rounds. */
export function keyKeptChanging(ref: ObjectRef): ConflictError {
  return new ConflictError(
    `API key ${refText(ref)} kept changing while this request tried to update it; retry`,
  );
}
