/*
 * GET /status (`getStatus` of `brokerOperations`): what an operator needs to see whether each
 * backend is reachable and current.
 */
import { NotAllowedError } from '@backstage/errors';
import {
  mcpBrokerStatusReadPermission,
  type AccessGrantsStatus,
} from '@devportal/plugin-mcp-broker-common';
import type { CuratedEndpointStatus } from '../endpoints/CuratedEndpoint';
import type { ServerIdentityStatus } from '../identity/BackendCredentialProvider';
import { accessOf, PrincipalAccessDeps } from './principalAccess';
import type { OperationHandler } from './bindBrokerOperation';

/** What the status handler needs besides the access decision. */
export interface StatusHandlerDeps extends PrincipalAccessDeps {
  /** Each server's identity settings (spec §11: mode, last token exchange error). */
  identityStatusOf?: (server: string) => ServerIdentityStatus | undefined;
  /**
   * Kubernetes resources that serve nothing, and why (spec §11.1, curated-endpoints §9; never a
   * secret): registrations and virtual servers.
   */
  refusedRegistrations?: () => ReadonlyArray<RefusedRegistrationStatus>;
  /** The curated endpoints (spec §13): `endpoints[]`. */
  endpoints?: () => ReadonlyArray<CuratedEndpointStatus>;
  /** The access grants this replica follows (mcp-access §6.7); absent without a source. */
  accessGrants?: () => AccessGrantsStatus;
}

/** One refused Kubernetes resource on `/status`: `registrations.refused[]`. */
export interface RefusedRegistrationStatus {
  /** `MCPServerRegistration` or `MCPVirtualServer`. */
  kind: string;
  namespace: string;
  name: string;
  /**
   * e.g. `AuthNotAllowed`, `ProfileNotFound`, `ProfileNotAllowed`, `UrlNotAllowed`;
   * `ToolOutsideNamespace`, `UnknownTool` (virtual servers); `Invalid`.
   */
  reason: string;
  message: string;
}

/**
 * Answers the broker status to principals with `mcp-broker.status.read` (403 otherwise; the
 * router's requirePrincipal has authenticated the request: user or service).
 */
export function statusHandler(deps: StatusHandlerDeps): OperationHandler<'getStatus'> {
  return async ({ req, res }) => {
    const access = await accessOf(deps, req, res);
    if (!access.mayReadStatus) {
      throw new NotAllowedError(
        `Reading the MCP broker status needs the permission ${mcpBrokerStatusReadPermission.name}`,
      );
    }
    const permissions = { authorizeCalls: deps.access.authorizeCalls };
    const status = deps.broker.status();
    const backends = status.backends.map(backend => ({
      ...backend,
      auth: deps.identityStatusOf?.(backend.name) ?? { mode: 'broker' },
    }));
    const registrations = { refused: [...(deps.refusedRegistrations?.() ?? [])] };
    const endpoints = [...(deps.endpoints?.() ?? [])];
    const accessGrants = deps.accessGrants?.();
    return {
      ...status,
      backends,
      registrations,
      permissions,
      endpoints,
      ...(accessGrants === undefined ? {} : { accessGrants }),
    };
  };
}
