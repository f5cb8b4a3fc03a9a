/*
 * Who may write (store or delete) a personal credential (spec §11.1): the person, from their own
 * browser. A write must carry Backstage's user cookie — the one the app (or the broker's page)
 * set for this host — and an `Origin` header equal to the backend's origin (`backend.baseUrl`,
 * where the broker's page lives) or the app's (`app.baseUrl`, where "My connections" writes from
 * with `credentials: 'include'`). Browsers always send `Origin` on a PUT or DELETE, so a request
 * without one did not come from a page, and a cross-site page cannot forge it.
 *
 * A bearer token does not show any of that: an MCP client that signed a person in (Backstage's
 * OIDC server, spec §10) holds a user token too, and must not be able to swap the credential the
 * broker presents for that person. Bearer writes are therefore refused, with a message naming
 * the page — unless the admin enabled them for service principals
 * (`mcpBroker.credentials.allowServiceWrites`, for automation that stores a service's own
 * credential); a user's bearer token never writes.
 *
 * Reading (names and dates) is not guarded here: any token the broker accepts may list.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';
import { NotAllowedError } from '@backstage/errors';
import type { Request } from 'express';
import { principalString } from './VerifiedPrincipalCache';

/** What {@link CredentialWriteGuard} accepts, read from config once at start-up. */
export interface CredentialWritePolicy {
  /** Origins a cookie write may come from: the backend's and the app's. */
  readonly origins: ReadonlySet<string>;
  /** `mcpBroker.credentials.allowServiceWrites`: service principals may write with a token. */
  readonly allowServiceWrites: boolean;
}

/** Reads the policy: `backend.baseUrl`, `app.baseUrl`, `mcpBroker.credentials.allowServiceWrites`. */
export function readCredentialWritePolicy(config: Config): CredentialWritePolicy {
  const origins = new Set<string>();
  for (const key of ['backend.baseUrl', 'app.baseUrl']) {
    const url = config.getOptionalString(key);
    if (url !== undefined) origins.add(new URL(url).origin);
  }
  return {
    origins,
    allowServiceWrites:
      config.getOptionalBoolean('mcpBroker.credentials.allowServiceWrites') ?? false,
  };
}

/** Decides whether a request may write a personal credential; see the file comment. */
export class CredentialWriteGuard {
  constructor(
    private readonly httpAuth: HttpAuthService,
    private readonly policy: CredentialWritePolicy,
    /** The broker's page for `server` (absolute URL), named in refusals. */
    private readonly pageUrl: (server: string) => string,
  ) {}

  /**
   * The writer's principal (`user:<ref>`, or `service:<subject>` when service writes are on).
   * Throws AuthenticationError without credentials and NotAllowedError for a write that did not
   * come from the person's browser.
   */
  async writer(req: Request, server: string): Promise<string> {
    if (req.headers.authorization !== undefined) return this.bearerWriter(req, server);
    const credentials = await this.httpAuth.credentials(req, {
      allow: ['user'],
      allowLimitedAccess: true,
    });
    const origin = req.headers.origin;
    if (origin === undefined) {
      throw new NotAllowedError(
        `Personal credentials are changed from a browser page, which sends an Origin header; this request has none. Open ${this.pageUrl(server)}`,
      );
    }
    if (!this.policy.origins.has(origin)) {
      throw new NotAllowedError(
        `Requests from ${origin.slice(0, 100)} may not change credentials: only the broker's page (${this.pageUrl(server)}) and the Backstage app may`,
      );
    }
    return principalString(credentials);
  }

  private async bearerWriter(req: Request, server: string): Promise<string> {
    const credentials = await this.httpAuth.credentials(req, { allow: ['user', 'service'] });
    if (credentials.principal.type === 'service' && this.policy.allowServiceWrites) {
      return principalString(credentials);
    }
    throw new NotAllowedError(
      `A token cannot change personal credentials (an MCP client holding your token must not swap the credential used on your behalf): store or delete it in your browser at ${this.pageUrl(server)}`,
    );
  }
}
