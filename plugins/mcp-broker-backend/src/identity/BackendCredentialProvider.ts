/*
 * The one place the call path asks "which credential does this person's request to this server
 * carry?" (spec §11). Used where a backend request is built for a person's `tools/call`,
 * `prompts/get`, `resources/read` or `completion/complete` — never for the event connection or
 * the shared lists, which always carry the server's static headers (the broker's own).
 *
 * The answer is the request's complete header set: the person's credential plus only those of
 * the server's static headers the admin marked as not credentials (`nonCredentialHeaders`, e.g.
 * a tenant header; never `Authorization`, `Proxy-Authorization`, `Cookie` or the mode's header).
 * Any other static header may be the broker's own credential under a name the broker cannot
 * recognise (`X-Api-Key`, …): it stays on the broker's own requests (event connection, lists).
 * The server URL's user info, also the broker's, is dropped from a person's requests where their
 * endpoint is built (personalEndpointOf). So in no mode does a request carry the client's token:
 * the client's `Authorization` never enters this module (the `backstage` mode asks Backstage for
 * a new plugin token; `tokenExchange` presents a token the authorization server issued for the
 * backend; `userCredential` the person's stored credential).
 *
 * A backend's 401/403 to a personal credential is turned into that person's error by `refused`
 * (and evicts a cached exchanged token), so it never counts against the server's connection.
 */
import { credentialRefused, type PersonalCredentialError } from './credentialErrors';
import type { CallerIdentity, ModeCredentials } from './credentialModes';
import { userEntityRefOf } from './credentialModes';
import type { ExchangedTokens, ExchangeFailure } from './ExchangedTokens';
import { BROKER_AUTH, type CredentialMode, type ServerAuth } from './serverAuth';

/**
 * A server entry as this module reads it (`BrokerServerConfig` has these members; the module does
 * not import config.ts, which imports it).
 */
export interface CredentialServer {
  readonly name: string;
  /** The server's static headers: the broker's own credentials and any other headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** The server's identity settings; absent means `broker`. */
  readonly auth?: ServerAuth;
  /**
   * Static headers the admin marked as not credentials: the only ones a person's request carries
   * besides the person's credential (names as configured; compared without case).
   */
  readonly nonCredentialHeaders?: readonly string[];
}

/**
 * Headers that are credentials whatever an admin says: never sent with a person's credential,
 * and refused in `nonCredentialHeaders` (config.ts).
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
]);

/** The headers of one person's request to a server. */
export interface PersonalRequestHeaders {
  readonly mode: CredentialMode;
  /** True when they carry the person's credential (any mode but `broker`). */
  readonly personal: boolean;
  /** The complete header set (secret values: never log them). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A server's identity settings as `/status` shows them (never a secret). */
export interface ServerIdentityStatus {
  readonly mode: CredentialMode;
  /** `backstage`: the plugin the tokens are for. */
  readonly targetPluginId?: string;
  /** `tokenExchange`: the token endpoint and the last failed exchange, if any. */
  readonly tokenEndpoint?: string;
  readonly lastExchangeError?: ExchangeFailure;
}

/** Options of {@link BackendCredentialProvider}. */
export interface BackendCredentialProviderOptions {
  /** The strategy of each mode (credentialModes.ts). */
  modes: ReadonlyArray<ModeCredentials<any>>;
  /** The exchanged-token cache, for evictions and `/status`. */
  exchangedTokens?: ExchangedTokens;
  /** The broker's page for storing `server`'s personal credential. */
  pageUrl(server: string): string;
}

/** The auth settings of a server entry (`broker` when it has none). */
export function authOf(server: Pick<CredentialServer, 'auth'>): ServerAuth {
  return server.auth ?? BROKER_AUTH;
}

/** The headers of a person's request; see the file comment. */
export class BackendCredentialProvider {
  private readonly modes: ReadonlyMap<CredentialMode, ModeCredentials<any>>;

  constructor(private readonly options: BackendCredentialProviderOptions) {
    this.modes = new Map(options.modes.map(m => [m.mode, m]));
  }

  /**
   * The headers of `caller`'s request to `server`. Rejects with CredentialRequiredError (a
   * personal credential to store first), PersonalCredentialError (tell the person), or the
   * signal's abort reason.
   */
  async requestHeaders(
    server: CredentialServer,
    caller: CallerIdentity,
    signal?: AbortSignal,
  ): Promise<PersonalRequestHeaders> {
    const auth = authOf(server);
    if (auth.mode === 'broker') return { mode: 'broker', personal: false, headers: server.headers };
    const strategy = this.modes.get(auth.mode);
    if (strategy === undefined) throw new Error(`MCP broker: no strategy for mode ${auth.mode}`);
    const credential = await strategy.credentialFor(server.name, auth, caller, signal);
    if (credential === undefined) {
      return { mode: auth.mode, personal: false, headers: server.headers };
    }
    const personalHeader = credential.header.toLowerCase();
    const marked = new Set((server.nonCredentialHeaders ?? []).map(name => name.toLowerCase()));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(server.headers)) {
      const lower = name.toLowerCase();
      if (!marked.has(lower) || CREDENTIAL_HEADERS.has(lower) || lower === personalHeader) continue;
      headers[name] = value;
    }
    headers[credential.header] = credential.value;
    return { mode: auth.mode, personal: true, headers };
  }

  /**
   * `server` answered 401/403 (`status`) to the credential presented for `caller`: forgets a
   * cached exchanged token and returns the error to tell that person.
   */
  refused(
    server: CredentialServer,
    caller: Pick<CallerIdentity, 'principal'>,
    status?: number,
  ): PersonalCredentialError {
    const mode = authOf(server).mode;
    if (mode === 'tokenExchange') {
      const subject = userEntityRefOf(caller.principal);
      if (subject !== undefined) this.options.exchangedTokens?.forget(server.name, subject);
    }
    return credentialRefused(server.name, mode, status, this.options.pageUrl(server.name));
  }

  /** The server was removed or changed: drops what was cached for it. */
  forgetServer(name: string): void {
    this.options.exchangedTokens?.forgetServer(name);
  }

  /** What `/status` shows of `server`'s identity settings. */
  statusOf(server: Pick<CredentialServer, 'name' | 'auth'>): ServerIdentityStatus {
    const auth = authOf(server);
    switch (auth.mode) {
      case 'backstage':
        return { mode: auth.mode, targetPluginId: auth.targetPluginId };
      case 'tokenExchange': {
        const lastExchangeError = this.options.exchangedTokens?.lastFailure(server.name);
        return {
          mode: auth.mode,
          tokenEndpoint: auth.tokenEndpoint,
          ...(lastExchangeError === undefined ? {} : { lastExchangeError }),
        };
      }
      default:
        return { mode: auth.mode };
    }
  }
}
