/*
 * Exchanged tokens per (server, person) (spec §11, `tokenExchange`): a call finds the person's
 * token here until 30 s before it expires (`expires_in`, else the token's own `exp` when it is a
 * JWT; a token with neither is used for one call only), so a person's calls cost one exchange per
 * token lifetime. Concurrent calls that miss share one exchange. A backend's 401/403 evicts the
 * token (`forget`); so does a change of the server's auth settings (they are part of the key).
 *
 * Tokens live in this process only (each replica exchanges for itself: an exchange is cheap next
 * to a shared store of bearer tokens) and are never logged. Memory is bounded: the oldest entry
 * makes room. The last failed exchange per server is kept, without any token, for `/status`.
 */
import { createHash } from 'node:crypto';
import { jwtExpiryMs } from './jwtClaims';
import type { TokenExchangeAuth } from './serverAuth';
import type { SubjectTokenIssuer } from './SubjectTokenIssuer';
import { exchangeToken, TokenExchangeError, type ExchangedToken } from './TokenExchangeClient';

/** A token is exchanged again this long before it expires. */
export const TOKEN_REFRESH_MARGIN_MS = 30_000;
/** Most cached tokens at once. */
export const DEFAULT_MAX_EXCHANGED_TOKENS = 10_000;

/** The last failed exchange of a server, as `/status` shows it. */
export interface ExchangeFailure {
  /** ISO 8601 time of the failure. */
  readonly at: string;
  /** What failed (endpoint host, the authorization server's error code); never a token. */
  readonly message: string;
}

/** Options of {@link ExchangedTokens}. */
export interface ExchangedTokensOptions {
  issuer: SubjectTokenIssuer;
  /** Time limit of one exchange (`mcpBroker.requestTimeout`). */
  timeoutMs: number;
  maxEntries?: number;
  /** Epoch ms; tests pass their own clock. */
  now?: () => number;
  /** The exchange itself (tests may count calls through it). */
  exchange?: typeof exchangeToken;
}

interface Entry {
  readonly token: string;
  readonly refreshAt: number;
}

/** Per-(server, person) exchanged tokens; see the file comment. */
export class ExchangedTokens {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly failures = new Map<string, ExchangeFailure>();

  constructor(private readonly options: ExchangedTokensOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * `subject`'s access token for `server`: cached, or exchanged now (within the exchange's own
   * time limit, `mcpBroker.requestTimeout`). Rejects with TokenExchangeError (recorded for
   * `/status`).
   */
  async tokenFor(server: string, auth: TokenExchangeAuth, subject: string): Promise<string> {
    const key = this.keyOf(server, auth, subject);
    const cached = this.entries.get(key);
    if (cached !== undefined && cached.refreshAt > this.now) return cached.token;
    if (cached !== undefined) this.entries.delete(key);
    let pending = this.pending.get(key);
    if (pending === undefined) {
      pending = this.exchange(server, auth, subject, key);
      this.pending.set(key, pending);
      const settle = () => this.pending.delete(key);
      pending.then(settle, settle);
    }
    return (await pending).token;
  }

  /** Drops `subject`'s token for `server` (the backend refused it). */
  forget(server: string, subject: string): void {
    const prefix = `${server}\n${subject}\n`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** Drops every token of `server` (removed or reconfigured). */
  forgetServer(server: string): void {
    const prefix = `${server}\n`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
    this.failures.delete(server);
  }

  /** The last failed exchange of `server`, if any. */
  lastFailure(server: string): ExchangeFailure | undefined {
    return this.failures.get(server);
  }

  /** Number of cached tokens (tests). */
  get size(): number {
    return this.entries.size;
  }

  private keyOf(server: string, auth: TokenExchangeAuth, subject: string): string {
    // The settings are part of the key (hashed: the client secret is among them), so a changed
    // audience or endpoint never serves a token obtained for the old one.
    const settings = createHash('sha256').update(JSON.stringify(auth)).digest('base64url');
    return `${server}\n${subject}\n${settings}`;
  }

  private async exchange(
    server: string,
    auth: TokenExchangeAuth,
    subject: string,
    key: string,
  ): Promise<Entry> {
    const exchange = this.options.exchange ?? exchangeToken;
    const subjectToken = this.options.issuer.issue(subject, auth.subjectTokenAudience);
    const obtainedAt = this.now;
    let token: ExchangedToken;
    try {
      token = await exchange(auth, subjectToken, AbortSignal.timeout(this.options.timeoutMs));
    } catch (error) {
      const failure =
        error instanceof TokenExchangeError
          ? error
          : new TokenExchangeError(
              (error as Error)?.name === 'TimeoutError'
                ? `token exchange at ${new URL(auth.tokenEndpoint).host} timed out after ${this.options.timeoutMs} ms`
                : `token exchange failed: ${(error as Error)?.message ?? error}`,
            );
      this.failures.set(server, { at: new Date(this.now).toISOString(), message: failure.message });
      throw failure;
    }
    const expiresAt =
      token.expiresInS !== undefined
        ? obtainedAt + token.expiresInS * 1000
        : jwtExpiryMs(token.accessToken);
    const entry = {
      token: token.accessToken,
      refreshAt: expiresAt === undefined ? obtainedAt : expiresAt - TOKEN_REFRESH_MARGIN_MS,
    };
    if (entry.refreshAt > this.now) this.remember(key, entry);
    return entry;
  }

  private remember(key: string, entry: Entry): void {
    const max = this.options.maxEntries ?? DEFAULT_MAX_EXCHANGED_TOKENS;
    this.entries.delete(key);
    while (this.entries.size >= max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, entry);
  }
}
