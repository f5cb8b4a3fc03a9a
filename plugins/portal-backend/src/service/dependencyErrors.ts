/*
 * Where failures of the Backstage services the portal asks on every request enter its code: the
 * user's groups (UserInfoService → the auth backend) and permission decisions
 * (PermissionsService → the permission backend). Both are HTTP calls to other plugins, which
 * answer 500 while their own database is down, or cannot be reached at all.
 *
 * Such a failure says nothing about the caller, so it must not reach the client as a 500 (a bug
 * of ours) or as a 403 (a decision that was never taken): {@link mapDependencyError} turns a
 * dependency that is down, overloaded or failing — no answer (refused, reset, timed out), 429 or
 * any 5xx — into ServiceUnavailableError (503; the router adds Retry-After). A 4xx answer is a
 * real answer about this request and passes through as it is.
 *
 * The limit of what can be told apart: the RBAC plugin answers DENY, not an error, when it
 * cannot take a decision (its own catalog look-up failed). Such a DENY cannot be told from a
 * policy's, so it stays a 403; the connection budget (docs/deployment.md) keeps its look-ups
 * waiting for a connection instead of failing.
 */
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  PermissionsService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { ServiceUnavailableError, isError } from '@backstage/errors';
import { isTimeoutOrNetworkError } from '@devportal/backend-kubernetes-client';

/** The HTTP status of a failed call to another plugin (Backstage's ResponseError), if any. */
function statusOf(error: unknown): number | undefined {
  const status = isError(error) ? (error as { statusCode?: unknown }).statusCode : undefined;
  return typeof status === 'number' ? status : undefined;
}

/**
 * `error` as the portal answers it: ServiceUnavailableError naming `dependency` when the
 * dependency is unreachable, overloaded or failing; the error itself otherwise.
 */
export function mapDependencyError(error: unknown, dependency: string): unknown {
  const status = statusOf(error);
  const down =
    status === undefined ? isTimeoutOrNetworkError(error) : status === 429 || status >= 500;
  return down
    ? new ServiceUnavailableError(`The ${dependency} is unavailable right now; retry later`)
    : error;
}

async function mapped<T>(call: () => Promise<T>, dependency: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw mapDependencyError(error, dependency);
  }
}

/** The user-info service, its failures mapped by {@link mapDependencyError}. */
export function userInfoWithDependencyErrors(userInfo: UserInfoService): UserInfoService {
  return {
    getUserInfo: (credentials: BackstageCredentials<BackstageUserPrincipal>) =>
      mapped(() => userInfo.getUserInfo(credentials), 'user information service (auth backend)'),
  };
}

/** The permissions service, its failures mapped by {@link mapDependencyError}. */
export function permissionsWithDependencyErrors(
  permissions: PermissionsService,
): PermissionsService {
  const dependency = 'permission backend';
  return {
    authorize: (requests, options) =>
      mapped(() => permissions.authorize(requests, options), dependency),
    authorizeConditional: (requests, options) =>
      mapped(() => permissions.authorizeConditional(requests, options), dependency),
  };
}
