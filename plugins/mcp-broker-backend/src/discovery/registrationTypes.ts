/*
 * What the registration mapping works with: the parts of a Kubernetes object it reads, the
 * cluster reads it needs, and the error that refuses a registration (with the reason its
 * status condition carries).
 */

/** The parts of a Kubernetes object the mapping reads. */
export interface KubeObjectLike {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
    resourceVersion?: string;
    generation?: number;
  };
  spec?: any;
  status?: any;
  data?: Record<string, string>;
}

/** What resolving a registration needs to read from the cluster. */
export interface RegistrationLookups {
  httpRoute(namespace: string, name: string): Promise<KubeObjectLike | undefined>;
  secret(namespace: string, name: string): Promise<KubeObjectLike | undefined>;
}

/**
 * Why a registration is refused, as the `reason` of its `Accepted` condition:
 * - `AuthNotAllowed`: it spells out `spec.auth`;
 * - `ProfileNotFound` / `ProfileNotAllowed`: it names an unknown profile, or one its namespace
 *   may not use;
 * - `UrlNotAllowed`: its URL is not one the profile allows;
 * - `ProfileUnavailable`: the profile's client secret cannot be read (the admin's to fix);
 * - `Invalid`: anything else it gets wrong (target, Secret, prefix, URL).
 */
export type RefusalReason =
  | 'AuthNotAllowed'
  | 'ProfileNotFound'
  | 'ProfileNotAllowed'
  | 'UrlNotAllowed'
  | 'ProfileUnavailable'
  | 'Invalid';

/** Why a registration could not become a server (shown in logs; never contains secrets). */
export class RegistrationError extends Error {
  constructor(
    message: string,
    readonly reason: RefusalReason = 'Invalid',
  ) {
    super(message);
  }
}
