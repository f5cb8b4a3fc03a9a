/*
 * An MCP session is many HTTP requests with the same bearer token: the SDK client POSTs every
 * message (and keeps a GET open) with one `Authorization` header. Backstage verifies a user token
 * as an ES256 JWT on every request, which was ~9% of the backend's busy time in the broker
 * benchmark. This cache remembers, per exact `Authorization: Bearer …` header, the principal a
 * successful verification produced, until the token expires and at most for `maxAgeMs`.
 *
 * Guarantees: the answer for a cached header equals what re-verification would answer, with one
 * exception (see the class TSDoc); failures are never cached; no header means no caching at all.
 * Memory is bounded: at most `maxEntries` entries of a 43-character key and a short principal.
 */
import { createHash } from 'node:crypto';
import type { BackstageCredentials, HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request } from 'express';
import { jwtExpiryMs } from '../identity/jwtClaims';

/** Longest time a verified token is remembered, whatever its own expiry. */
export const DEFAULT_VERIFIED_TOKEN_MAX_AGE_MS = 60_000;
/** Most tokens remembered at once; the oldest entry makes room for a new one. */
export const DEFAULT_VERIFIED_TOKEN_MAX_ENTRIES = 10_000;

/** Options of {@link VerifiedPrincipalCache.create}. */
export interface VerifiedPrincipalCacheOptions {
  httpAuth: HttpAuthService;
  /** Default {@link DEFAULT_VERIFIED_TOKEN_MAX_AGE_MS}. */
  maxAgeMs?: number;
  /** Default {@link DEFAULT_VERIFIED_TOKEN_MAX_ENTRIES}. */
  maxEntries?: number;
  /** Milliseconds since the epoch; tests pass their own clock. */
  now?: () => number;
}

interface Entry {
  principal: string;
  expiresAt: number;
}

const BEARER = /^bearer /i;

/** The principal as the broker stores it with a session: `user:<ref>` or `service:<subject>`. */
export function principalString(credentials: BackstageCredentials): string {
  const principal = credentials.principal as {
    type: string;
    userEntityRef?: string;
    subject?: string;
  };
  return principal.type === 'user'
    ? `user:${principal.userEntityRef}`
    : `service:${principal.subject}`;
}

/**
 * The `exp` claim (ms) of a token that looks like a JWT, else undefined. Read only after Backstage
 * has verified the token, so the claim is the signed one; for a token that is not a JWT (a static
 * token) it is simply absent. It can only shorten an entry's life, never extend it.
 */
function jwtExpiry(authorization: string): number | undefined {
  return jwtExpiryMs(authorization.slice(7).trim());
}

/**
 * Authenticates requests (user or service principals, as `httpAuth.credentials(req, { allow:
 * ['user', 'service'] })`) and remembers successful verifications per bearer header.
 *
 * An entry lives until the earliest of: the credentials' `expiresAt` (user tokens), the token's
 * own signed `exp` claim (plugin and JWKS service tokens carry one), and `maxAgeMs` after the
 * verification. Backstage user tokens are stateless JWTs without revocation, so within that
 * lifetime re-verification would give the same answer — except when the auth backend's signing
 * key is removed (key rotation, a wiped key store): a token signed with the removed key keeps
 * working here for at most `maxAgeMs` (60 s by default), where Backstage would refuse it at once.
 * Static service tokens (`backend.auth.externalAccess`) are cached with the same cap: Backstage
 * 1.55 reads them once at start-up, and if a later version re-reads them on a config reload, a
 * removed token keeps working for at most `maxAgeMs`.
 *
 * Keys are the SHA-256 of the whole `Authorization` header (~1.4 µs per request, measured here,
 * against the ~0.25 ms per call that verifying a user token cost in the broker benchmark): the
 * cache holds no usable token, and a key is 43 characters however large the header (up to
 * 16 KiB in Node), so `maxEntries` bounds memory to a few MB. Requests without a bearer header
 * are passed to `httpAuth` every time (it answers 401 as before).
 * Failures (401, 403) are never cached. Tokens are never logged.
 */
export class VerifiedPrincipalCache {
  readonly #httpAuth: HttpAuthService;
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Insertion order is age order: the first key is the oldest entry. */
  readonly #entries = new Map<string, Entry>();

  static create(options: VerifiedPrincipalCacheOptions): VerifiedPrincipalCache {
    return new VerifiedPrincipalCache(options);
  }

  private constructor(options: VerifiedPrincipalCacheOptions) {
    this.#httpAuth = options.httpAuth;
    this.#maxAgeMs = options.maxAgeMs ?? DEFAULT_VERIFIED_TOKEN_MAX_AGE_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_VERIFIED_TOKEN_MAX_ENTRIES;
    this.#now = options.now ?? Date.now;
  }

  /** Number of remembered tokens (expired ones included until looked up or evicted). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The request's principal (`user:<ref>` or `service:<subject>`). Throws Backstage's
   * `AuthenticationError` (401) or `NotAllowedError` (403) exactly as `httpAuth` does.
   */
  async principalOf(req: Request): Promise<string> {
    const authorization = req.headers.authorization;
    if (typeof authorization !== 'string' || !BEARER.test(authorization)) {
      return principalString(await this.#httpAuth.credentials(req, { allow: ['user', 'service'] }));
    }
    const key = createHash('sha256').update(authorization).digest('base64url');
    const cached = this.#entries.get(key);
    if (cached !== undefined) {
      if (cached.expiresAt > this.#now()) return cached.principal;
      this.#entries.delete(key);
    }
    const credentials = await this.#httpAuth.credentials(req, { allow: ['user', 'service'] });
    const principal = principalString(credentials);
    this.#remember(key, principal, credentials, authorization);
    return principal;
  }

  #remember(
    key: string,
    principal: string,
    credentials: BackstageCredentials,
    authorization: string,
  ) {
    // Read the clock after verification: the cap counts from when the answer was known.
    const now = this.#now();
    const expiresAt = Math.min(
      now + this.#maxAgeMs,
      credentials.expiresAt?.getTime() ?? Infinity,
      jwtExpiry(authorization) ?? Infinity,
    );
    if (!(expiresAt > now) || this.#maxEntries < 1) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { principal, expiresAt });
  }
}
