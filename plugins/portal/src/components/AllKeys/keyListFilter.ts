/*
 * The All keys page's filter form and the `/requests` query it becomes (docs/contracts/
 * portal-admin-keys.md): a person types names as they know them ("alice"), the API takes full
 * entity refs (`user:default/alice`); a product is named within its namespace, so the product
 * filter is sent only with one.
 */
import type { ApiKeyPhase, RequestListQuery } from '@devportal/plugin-portal-common';

/** What the filter form holds (empty strings: not filtered). */
export interface KeyListFilter {
  namespace: string;
  product: string;
  /** The product's owner: refs or names, separated by commas. */
  owner: string;
  requester: string;
  phase: ApiKeyPhase | '';
}

/** The form before anything is typed. */
export const EMPTY_KEY_LIST_FILTER: KeyListFilter = {
  namespace: '',
  product: '',
  owner: '',
  requester: '',
  phase: '',
};

/** `alice` → `user:default/alice`; `group:x` → `group:default/x`; a full ref as it is. */
export function entityRefOf(text: string, defaultKind: string): string {
  const trimmed = text.trim();
  if (trimmed.includes('/')) return trimmed;
  const colon = trimmed.indexOf(':');
  return colon === -1
    ? `${defaultKind}:default/${trimmed}`
    : `${trimmed.slice(0, colon)}:default/${trimmed.slice(colon + 1)}`;
}

/**
 * The query of a filter. `ownerRefs`, when given, is the owner filter a product owner's view
 * is fixed to (their own refs); otherwise the typed owners are used.
 */
export function keyListQuery(filter: KeyListFilter, ownerRefs?: string[]): RequestListQuery {
  const namespace = filter.namespace.trim();
  const product = filter.product.trim();
  const owners =
    ownerRefs ??
    filter.owner
      .split(',')
      .map(owner => owner.trim())
      .filter(owner => owner !== '')
      .map(owner => entityRefOf(owner, 'user'));
  const requester = filter.requester.trim();
  return {
    ...(namespace !== '' && { namespace }),
    ...(namespace !== '' && product !== '' && { product }),
    ...(owners.length > 0 && { owner: owners.join(',') }),
    ...(requester !== '' && { requester: entityRefOf(requester, 'user') }),
    ...(filter.phase !== '' && { status: filter.phase }),
  };
}
