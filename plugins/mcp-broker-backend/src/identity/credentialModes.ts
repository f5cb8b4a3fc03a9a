/*
 * The four credential modes of spec §11, one strategy each: given the caller, the credential to
 * present to a server on their behalf (a header name and value) — or the error that tells the
 * person what to do. BackendCredentialProvider picks the strategy by the server's `auth.mode`.
 *
 * - broker:         nothing personal: the server's static headers, as for the event connection.
 * - backstage:      `auth.getPluginRequestToken({ onBehalfOf, targetPluginId })` — a plugin token
 *                   that carries the user (a service principal gets a token of the broker itself:
 *                   Backstage's rule for service credentials), so the plugin applies that
 *                   person's permissions. It is not the client's token.
 * - tokenExchange:  an RFC 8693 token for the user (ExchangedTokens; users only: a service
 *                   principal has no person to exchange for).
 * - userCredential: the person's stored credential (PersonalCredentialService), or the URL
 *                   elicitation that leads them to the broker's page to store one.
 */
import { randomBytes } from 'node:crypto';
import type { AuthService, BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  CredentialRequiredError,
  PersonalCredentialError,
  type CredentialElicitation,
} from './credentialErrors';
import type { ExchangedTokens } from './ExchangedTokens';
import {
  CredentialsNotConfiguredError,
  type PersonalCredentialService,
} from './PersonalCredentialService';
import type { CredentialRequestStore } from './personalCredentialStores';
import type {
  BackstageAuth,
  CredentialMode,
  ServerAuth,
  TokenExchangeAuth,
  UserCredentialAuth,
} from './serverAuth';
import { TokenExchangeError } from './TokenExchangeClient';

/** Who is calling, as the credential modes need to know. */
export interface CallerIdentity {
  /** `user:<entity ref>` or `service:<subject>` (as the broker keys sessions). */
  readonly principal: string;
  /**
   * The caller's verified Backstage credentials, read only when a mode needs them (`backstage`):
   * the broker does not verify a token again for the other modes.
   */
  credentials(): Promise<BackstageCredentials>;
  /** The 2025-11-25 client session, told when a requested credential has been stored. */
  readonly clientSessionId?: string;
  /** Which protocol era the client speaks: only 2025-11-25 elicitations carry an id. */
  readonly era: 'legacy' | 'modern';
}

/** The credential one person's request to a server carries. */
export interface PresentedCredential {
  /** The header name, e.g. `Authorization`. */
  readonly header: string;
  /** Its value (secret: never logged). */
  readonly value: string;
}

/** One mode's way to the caller's credential; undefined: the server's static headers. */
export interface ModeCredentials<A extends ServerAuth = ServerAuth> {
  readonly mode: CredentialMode;
  credentialFor(
    server: string,
    auth: A,
    caller: CallerIdentity,
    signal?: AbortSignal,
  ): Promise<PresentedCredential | undefined>;
}

/** The user entity ref of a `user:` principal, else undefined. */
export function userEntityRefOf(principal: string): string | undefined {
  return principal.startsWith('user:') ? principal.slice('user:'.length) : undefined;
}

/** `broker`: nothing personal. */
export const brokerModeCredentials: ModeCredentials = {
  mode: 'broker',
  async credentialFor() {
    return undefined;
  },
};

/** `backstage`: a plugin token on behalf of the caller; see the file comment. */
export class BackstageModeCredentials implements ModeCredentials<BackstageAuth> {
  readonly mode = 'backstage' as const;

  constructor(private readonly auth: AuthService) {}

  async credentialFor(server: string, auth: BackstageAuth, caller: CallerIdentity) {
    let token: string;
    try {
      ({ token } = await this.auth.getPluginRequestToken({
        onBehalfOf: await caller.credentials(),
        targetPluginId: auth.targetPluginId,
      }));
    } catch (error) {
      throw new PersonalCredentialError(
        server,
        'backstage',
        `The broker could not obtain a Backstage token on your behalf for ${server} (plugin ${auth.targetPluginId}): ${
          (error as Error)?.message ?? error
        }. Sign in again and retry.`,
        'token-unavailable',
      );
    }
    return { header: 'Authorization', value: `Bearer ${token}` };
  }
}

/** `tokenExchange`: the person's exchanged token; see the file comment. */
export class TokenExchangeModeCredentials implements ModeCredentials<TokenExchangeAuth> {
  readonly mode = 'tokenExchange' as const;

  constructor(private readonly tokens: ExchangedTokens) {}

  async credentialFor(server: string, auth: TokenExchangeAuth, caller: CallerIdentity) {
    const subject = userEntityRefOf(caller.principal);
    if (subject === undefined) {
      throw new PersonalCredentialError(
        server,
        'tokenExchange',
        `${server} acts with each person's own identity (token exchange), and a service principal is no person: call it with a user's token.`,
        'unsupported-principal',
      );
    }
    try {
      const token = await this.tokens.tokenFor(server, auth, subject);
      return { header: 'Authorization', value: `Bearer ${token}` };
    } catch (error) {
      if (!(error instanceof TokenExchangeError)) throw error;
      throw new PersonalCredentialError(
        server,
        'tokenExchange',
        `The broker could not obtain your credential for ${server}: the ${error.message}. Retry later; if it persists, ask the broker's operators (the exchange is shown on /api/mcp-broker/status).`,
        'exchange-failed',
      );
    }
  }
}

/** Options of {@link UserCredentialModeCredentials}. */
export interface UserCredentialModeOptions {
  credentials: PersonalCredentialService;
  requests: CredentialRequestStore;
  /** The broker's page for storing `server`'s credential (absolute URL, no query). */
  pageUrl(server: string): string;
  /** How long an elicitation id is good (`mcpBroker.elicitationTtl`). */
  elicitationTtlMs: number;
  now?: () => number;
}

/** `userCredential`: the stored credential, or the URL elicitation; see the file comment. */
export class UserCredentialModeCredentials implements ModeCredentials<UserCredentialAuth> {
  readonly mode = 'userCredential' as const;

  constructor(private readonly options: UserCredentialModeOptions) {}

  async credentialFor(server: string, auth: UserCredentialAuth, caller: CallerIdentity) {
    let value: string | undefined;
    try {
      value = await this.options.credentials.reveal(caller.principal, server);
    } catch (error) {
      if (!(error instanceof CredentialsNotConfiguredError)) throw error;
      throw new PersonalCredentialError(
        server,
        'userCredential',
        `${server} needs a personal credential, but this broker cannot store any (mcpBroker.credentialEncryptionKey is not set): ask its operators.`,
        'not-configured',
      );
    }
    if (value !== undefined) return { header: auth.header, value: `${auth.prefix}${value}` };
    throw new CredentialRequiredError(server, await this.elicitation(server, auth, caller));
  }

  private async elicitation(
    server: string,
    auth: UserCredentialAuth,
    caller: CallerIdentity,
  ): Promise<CredentialElicitation> {
    const page = this.options.pageUrl(server);
    const what = auth.description === undefined ? '' : ` (${auth.description})`;
    const message = `${server} acts with your own account: store your personal credential${what} for it once at the broker's page, then call again.`;
    if (caller.era === 'modern') return { mode: 'url', url: page, message };
    const id = randomBytes(16).toString('base64url');
    await this.options.requests.create({
      id,
      principal: caller.principal,
      server,
      ...(caller.clientSessionId === undefined ? {} : { clientSessionId: caller.clientSessionId }),
      expiresAt: (this.options.now ?? Date.now)() + this.options.elicitationTtlMs,
    });
    return {
      mode: 'url',
      url: `${page}?elicitationId=${encodeURIComponent(id)}`,
      message,
      elicitationId: id,
    };
  }
}
