/*
 * A page or section shown only to holders of one permission: while the decision loads it says
 * what it is loading, and to anyone denied it names the permission that would let them see it.
 */
import type { Permission } from '@backstage/plugin-permission-common';
import type { ReactNode } from 'react';
import { useDecision } from '../../hooks/usePermissions';
import { ForbiddenState, LoadingState } from './StateViews';

/** Props of {@link PermissionGate}. */
export interface PermissionGateProps {
  permission: Permission;
  /** What is loading, as in "Loading {loading}…". */
  loading: string;
  /** What a person without the permission may not see. */
  what: string;
  /** Shown (mounted) only once the permission is granted. */
  children: ReactNode;
}

/** `children` for holders of `permission`; a loading or forbidden state for anyone else. */
export function PermissionGate(props: PermissionGateProps) {
  const decision = useDecision(props.permission);
  if (decision.loading) return <LoadingState what={props.loading} />;
  if (!decision.allowed) {
    return <ForbiddenState what={props.what} permission={props.permission.name} />;
  }
  return <>{props.children}</>;
}
