/*
 * Test helpers for the service layers: the PortalActors of a fixed set of users (a test
 * double of UserInfoService, which needs the catalog; the real one runs in the end-to-end
 * tests of packages/backend) and the credentials of one of them.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { PortalActors } from '../PortalActors';
import type { PortalActor } from '../types';

/** PortalActors that know `users` (their groups); anyone else owns only itself. */
export function testActors(users: PortalActor[]): PortalActors {
  return PortalActors.create({
    userInfo: mockServices.userInfo.mock({
      getUserInfo: async (credentials: BackstageCredentials) => {
        const userEntityRef = (credentials.principal as { userEntityRef: string }).userEntityRef;
        const user = users.find(u => u.userRef === userEntityRef);
        return {
          userEntityRef,
          ownershipEntityRefs: user?.ownershipRefs ?? [userEntityRef],
        };
      },
    }),
  });
}

/** The credentials of `actor` (a signed-in user). */
export function credentialsOf(actor: PortalActor): BackstageCredentials {
  return mockCredentials.user(actor.userRef);
}
