/*
 * Who the caller is, as both service layers need it: the user's entity ref and its
 * ownership refs (its groups), from Backstage's UserInfoService.
 *
 * Guarantee: one `getUserInfo` per request. The authorized layer and the business service
 * both ask for the actor of the same credentials object (the router makes one per request),
 * so the answer is remembered per credentials object (a WeakMap: it goes with the request).
 * Service principals have no actor; `requireUser` answers them 403, since every change
 * records who made it.
 */
import type { BackstageCredentials, UserInfoService } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import type { PortalActor } from './types';

/** Resolves (and remembers per request) the signed-in user behind credentials. */
export class PortalActors {
  readonly #userInfo: UserInfoService;
  readonly #byCredentials = new WeakMap<BackstageCredentials, Promise<PortalActor | undefined>>();

  static create(options: { userInfo: UserInfoService }): PortalActors {
    return new PortalActors(options.userInfo);
  }

  private constructor(userInfo: UserInfoService) {
    this.#userInfo = userInfo;
  }

  /** The calling user and its groups; undefined for service principals. */
  actorOf(credentials: BackstageCredentials): Promise<PortalActor | undefined> {
    let actor = this.#byCredentials.get(credentials);
    if (actor === undefined) {
      actor = this.#resolve(credentials);
      this.#byCredentials.set(credentials, actor);
      // A failed look-up is asked again by the next caller rather than remembered.
      actor.catch(() => this.#byCredentials.delete(credentials));
    }
    return actor;
  }

  /** The calling user; NotAllowedError naming `what` for service principals. */
  async requireUser(credentials: BackstageCredentials, what: string): Promise<PortalActor> {
    const actor = await this.actorOf(credentials);
    if (!actor) {
      throw new NotAllowedError(`${what} needs a signed-in user; service principals may only read`);
    }
    return actor;
  }

  async #resolve(credentials: BackstageCredentials): Promise<PortalActor | undefined> {
    const principal = credentials.principal as {
      type?: string;
      userEntityRef?: string;
    };
    if (principal.type !== 'user' || principal.userEntityRef === undefined) {
      return undefined;
    }
    const info = await this.#userInfo.getUserInfo(
      credentials as BackstageCredentials<{
        type: 'user';
        userEntityRef: string;
      }>,
    );
    // Lower case: owner annotations are stored normalised that way (entity refs are
    // case-insensitive), and the store compares owner refs exactly.
    const ownershipRefs = [
      ...new Set(
        [info.userEntityRef, ...info.ownershipEntityRefs].map(ref =>
          ref.toLocaleLowerCase('en-US'),
        ),
      ),
    ];
    return { userRef: info.userEntityRef, ownershipRefs };
  }
}
