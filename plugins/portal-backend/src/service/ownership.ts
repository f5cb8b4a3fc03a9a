/*
 * Ownership and permission-scope helpers of AuthorizedPortalService. Entity refs are
 * compared case-insensitively, as the catalog does.
 */
import { NotAllowedError } from '@backstage/errors';
import type { ApiKey } from '@devportal/plugin-portal-common';
import type { PortalActor } from './types';

/** What the caller may see of a family: everything, its own records, or nothing. */
export type Scope = 'all' | 'own' | 'none';

export function sameRef(a: string, b: string): boolean {
  return a.toLocaleLowerCase('en-US') === b.toLocaleLowerCase('en-US');
}

export function ownsRef(actor: PortalActor | undefined, owner: string | undefined): boolean {
  return (
    actor !== undefined &&
    owner !== undefined &&
    actor.ownershipRefs.some(ref => sameRef(ref, owner))
  );
}

export function isRequester(actor: PortalActor | undefined, key: ApiKey): boolean {
  return actor !== undefined && sameRef(key.spec.requestedBy.userId, actor.userRef);
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
