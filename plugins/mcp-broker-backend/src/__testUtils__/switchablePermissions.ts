/*
 * Permissions service test doubles for startTestBackend, over the allow-everything mock: one
 * whose conditional decisions (the broker's per-principal catalog decisions) fail with a
 * connection error while the permission backend is "unavailable", and one that denies a
 * permission to chosen users, as a policy change would.
 */
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';

/** Allows everything, with the conditional decisions passed through `decide`. */
function permissionsDeciding(
  decide: (allowed: any[], requests: any[], options: any) => any[] | Promise<any[]>,
) {
  const allowAll = mockServices.permissions();
  return createServiceFactory({
    service: coreServices.permissions,
    deps: {},
    factory: () => ({
      authorize: (requests: any, options: any) => allowAll.authorize(requests, options),
      authorizeConditional: async (requests: any, options: any) =>
        decide(await allowAll.authorizeConditional(requests, options), requests, options),
    }),
  });
}

/** The permissions service factory; `available` is asked on every conditional decision. */
export function switchablePermissions(available: () => boolean) {
  return permissionsDeciding(allowed => {
    if (!available()) throw new Error('connect ECONNREFUSED permission backend');
    return allowed;
  });
}

/**
 * The permissions service factory that denies `permission` to the users (entity refs) in
 * `revoked`, read on every decision.
 */
export function revocablePermission(permission: string, revoked: ReadonlySet<string>) {
  return permissionsDeciding((allowed, requests, options) => {
    const user = options?.credentials?.principal?.userEntityRef;
    return allowed.map((decision, i) =>
      revoked.has(user) && requests[i].permission.name === permission
        ? { result: AuthorizeResult.DENY }
        : decision,
    );
  });
}
