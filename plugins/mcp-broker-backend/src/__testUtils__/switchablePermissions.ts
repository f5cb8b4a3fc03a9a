/*
 * A permissions service test double for startTestBackend: allows everything while `available()`
 * says so, and fails conditional decisions (the broker's per-principal catalog decisions) with a
 * connection error otherwise, as an unreachable permission backend would.
 */
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';

/** The permissions service factory; `available` is asked on every conditional decision. */
export function switchablePermissions(available: () => boolean) {
  const allowAll = mockServices.permissions();
  return createServiceFactory({
    service: coreServices.permissions,
    deps: {},
    factory: () => ({
      authorize: (requests: any, options: any) => allowAll.authorize(requests, options),
      authorizeConditional: async (requests: any, options: any) => {
        if (!available()) throw new Error('connect ECONNREFUSED permission backend');
        return allowAll.authorizeConditional(requests, options);
      },
    }),
  });
}
