/*
 * Several permission decisions at once, for showing, hiding and disabling actions. The server
 * stays the authority: a hidden button only spares a person a refusal.
 */
import type { Permission } from '@backstage/plugin-permission-common';
import { usePermission } from '@backstage/plugin-permission-react';

/** The decision of one permission: loading until known. */
export interface Decision {
  loading: boolean;
  allowed: boolean;
}

/** `usePermission` for a basic permission, or a resource permission with its resource ref. */
export function useDecision(permission: Permission, resourceRef?: string): Decision {
  const { loading, allowed } = usePermission(
    resourceRef === undefined
      ? { permission: permission as any }
      : { permission: permission as any, resourceRef },
  );
  return { loading, allowed };
}

/** A `.own` / `.all` pair: `all` covers any record, `own` only the person's own. */
export interface ScopedDecision {
  loading: boolean;
  all: boolean;
  own: boolean;
}

/** Both decisions of a `.own` / `.all` permission pair. */
export function useScopedDecision(own: Permission, all: Permission): ScopedDecision {
  const ownDecision = useDecision(own);
  const allDecision = useDecision(all);
  return {
    loading: ownDecision.loading || allDecision.loading,
    all: allDecision.allowed,
    own: ownDecision.allowed,
  };
}

/** Whether a scoped decision covers a record (owned or not). */
export function covers(decision: ScopedDecision, owned: boolean): boolean {
  return decision.all || (decision.own && owned);
}
