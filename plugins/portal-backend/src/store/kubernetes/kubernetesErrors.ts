/*
 * The one place where failures of calls to the Kubernetes API server become
 * `@backstage/errors`. Every call of the Kubernetes client goes through
 * `mapKubernetesError` (see kubernetesClient.ts), so the store only ever sees:
 *
 * - 404 → NotFoundError; 409 → ConflictError (AlreadyExistsError for reason
 *   AlreadyExists, so the store can tell a taken name from a stale resourceVersion);
 * - 400 and 422 → InputError with the API server's own message (it names the field); a 422
 *   of an APIProduct CRD that knows no MCP targets (Kuadrant's own) → InputError saying to
 *   install this repository's CRDs or use the database store (contract mcp-access §3.5);
 * - 401 and 403 → ServiceUnavailableError: the portal's own credentials were refused,
 *   which is an operator's problem, never the user's. Logged with the API server's
 *   message (which names the service account, verb and resource, never a value);
 * - 429, 5xx, timeouts and network failures → ServiceUnavailableError (retry later).
 *
 * - 410 on a list (an expired `continue`) → InputError: the client restarts its walk.
 *
 * Anything else (405, 415, other 410s, a non-HTTP error) is a bug in the portal and surfaces
 * unchanged as a 500. Messages never carry request bodies, so a Secret's value can
 * never leak through an error.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotFoundError,
  ServiceUnavailableError,
  isError,
} from '@backstage/errors';
import {
  isTimeoutOrNetworkError,
  kubernetesApiStatusOf,
} from '@devportal/backend-kubernetes-client';
import { AlreadyExistsError } from './AlreadyExistsError';

/** What the failed call was, for messages: e.g. `get apikeys toystore/k-1`. */
export interface KubernetesCallDescription {
  verb: string;
  resource: string;
  namespace?: string;
  name?: string;
}

function describe(call: KubernetesCallDescription): string {
  if (call.name !== undefined) {
    const prefix = call.namespace === undefined ? '' : `${call.namespace}/`;
    return `${call.verb} ${call.resource} ${prefix}${call.name}`;
  }
  const where = call.namespace === undefined ? '' : ` in namespace ${call.namespace}`;
  return `${call.verb} ${call.resource}${where}`;
}

/** What to do when the cluster's APIProduct CRD knows HTTPRoute targets only (mcp-access §3.5). */
const MCP_TARGETS_REFUSED =
  "this cluster's APIProduct CRD does not accept MCP targets: install the CRDs of deploy/crds or use portal.storage: database";

/**
 * Whether a 422 is an APIProduct CRD without MCP targets (Kuadrant's own) refusing one: its
 * enum of `spec.targetRef` answers `Unsupported value: "MCPServer"` (or the group).
 */
function refusesMcpTargets(call: KubernetesCallDescription, serverMessage: string): boolean {
  return (
    call.resource === 'apiproducts' &&
    /Unsupported value/.test(serverMessage) &&
    /"(MCPServer|MCPEndpoint|mcp\.devportal\.io)"/.test(serverMessage)
  );
}

/**
 * Maps a failure of one Kubernetes API call to an `@backstage/errors` error (see the
 * file comment). `logger` receives the refusals of the portal's own credentials.
 */
export function mapKubernetesError(
  error: unknown,
  call: KubernetesCallDescription,
  logger: LoggerService,
  timeoutMs: number,
): Error {
  const status = kubernetesApiStatusOf(error);
  if (status === undefined) {
    if (isTimeoutOrNetworkError(error)) {
      const timedOut = /abort|timeout/i.test(
        `${(error as Error).name} ${(error as Error).message}`,
      );
      return new ServiceUnavailableError(
        timedOut
          ? `The Kubernetes API server did not answer ${describe(call)} within ${timeoutMs} ms; retry later`
          : `The Kubernetes API server cannot be reached (${describe(call)}); retry later`,
        error,
      );
    }
    return isError(error) ? error : new Error(String(error));
  }
  const serverMessage = status.message ?? `HTTP ${status.code}`;
  switch (status.code) {
    case 404:
      return new NotFoundError(serverMessage);
    case 409:
      return status.reason === 'AlreadyExists'
        ? new AlreadyExistsError(serverMessage)
        : new ConflictError(serverMessage);
    case 422:
      return refusesMcpTargets(call, serverMessage)
        ? new InputError(MCP_TARGETS_REFUSED)
        : new InputError(serverMessage);
    case 400:
      return new InputError(serverMessage);
    case 401:
    case 403:
      logger.error(
        `The Kubernetes API server refused the portal's credentials (HTTP ${status.code}) for ${describe(call)}: ${serverMessage}. Check the service account's RBAC (deploy/rbac.yaml) or the kubeconfig in portal.kubernetes.`,
      );
      return new ServiceUnavailableError(
        'The portal is not allowed to use its Kubernetes storage right now; an administrator has to check its credentials (see the backend log)',
      );
    case 410:
      // Only a list with `continue` can get 410 (Expired): the page token outlived the
      // API server's history. The client's fix is to start its walk again.
      if (call.verb === 'list') {
        return new InputError(
          'continue token expired: the Kubernetes API server no longer keeps the list it ' +
            `continues (${serverMessage}); start the list again without continue`,
        );
      }
      return new Error(
        `Unexpected answer of the Kubernetes API server to ${describe(call)}: ` +
          `HTTP 410 ${serverMessage}`,
      );
    case 429:
      return new ServiceUnavailableError(
        `The Kubernetes API server is overloaded (${describe(call)}); retry later`,
      );
    default:
      if (status.code >= 500) {
        return new ServiceUnavailableError(
          `The Kubernetes API server failed (${describe(call)}, HTTP ${status.code}): ${serverMessage}; retry later`,
        );
      }
      return new Error(
        `Unexpected answer of the Kubernetes API server to ${describe(call)}: HTTP ${status.code} ${serverMessage}`,
      );
  }
}
