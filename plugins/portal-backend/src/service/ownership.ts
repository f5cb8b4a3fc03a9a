/*
 * Ownership and permission-scope helpers of AuthorizedPortalService. Entity refs are
 * compared case-insensitively, as the catalog does.
 */
import { isError, NotAllowedError, NotFoundError } from '@backstage/errors';
import type { ApiKey, ObjectRef } from '@devportal/plugin-portal-common';
import { describeRef } from './DefaultPortalService';
import type { PortalActor } from './types';

/** What the caller may see of a family: everything, its own records, or nothing. */
export type Scope = 'all' | 'own' | 'none';

export function sameRef(a: string, b: string): boolean {
  return a.toLocaleLowerCase('en-US') === b.toLocaleLowerCase('en-US');
}

export function ownsRef(
  actor: PortalActor | undefined,
  owner: string | undefined,
): boolean {
  return (
    actor !== undefined &&
    owner !== undefined &&
    actor.ownershipRefs.some(ref => sameRef(ref, owner))
  );
}

export function isRequester(
  actor: PortalActor | undefined,
  key: ApiKey,
): boolean {
  return (
    actor !== undefined && sameRef(key.spec.requestedBy.userId, actor.userRef)
  );
}

export function scopeOf(all: boolean, own: boolean): Scope {
  if (all) return 'all';
  return own ? 'own' : 'none';
}

/** The scope when the caller has one; NotAllowedError with `message` when it has neither. */
export function requireScope(scope: Scope, message: string): 'all' | 'own' {
  if (scope === 'none') throw new NotAllowedError(message);
  return scope;
}

export function productNotFound(ref: ObjectRef) {
  return new NotFoundError(`APIProduct ${describeRef(ref)} not found`);
}

export function keyNotFound(ref: ObjectRef) {
  return new NotFoundError(`APIKey ${describeRef(ref)} not found`);
}

const STATUS_BY_ERROR_NAME: Record<string, number> = {
  InputError: 400,
  AuthenticationError: 401,
  NotAllowedError: 403,
  NotFoundError: 404,
  ConflictError: 409,
  ServiceUnavailableError: 503,
};

/**
 * A bulk item's error. Only `@backstage/errors` (client mistakes, conflicts, an
 * unavailable store) become item results; anything else is a server fault and fails the
 * whole call, so it is logged by the error middleware instead of hidden in a 200.
 */
export function toItemError(error: unknown): {
  name: string;
  message: string;
  statusCode: number;
} {
  if (isError(error) && STATUS_BY_ERROR_NAME[error.name] !== undefined) {
    return {
      name: error.name,
      message: error.message,
      statusCode: STATUS_BY_ERROR_NAME[error.name],
    };
  }
  throw error;
}
