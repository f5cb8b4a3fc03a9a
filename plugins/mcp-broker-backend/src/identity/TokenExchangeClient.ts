/*
 * One OAuth 2.0 Token Exchange request (RFC 8693 §2) at a server's `tokenEndpoint`: the broker
 * authenticates as its own client (RFC 6749 §2.3.1: HTTP Basic by default, or the client_secret_post
 * parameters), presents the caller's subject token (SubjectTokenIssuer) and asks for an access
 * token for the backend (`audience`, `resource`, `scope` from config). Nothing here caches
 * (ExchangedTokens does) or logs; an error message is the broker's own wording: it names the
 * endpoint's host, the HTTP status and the authorization server's `error` code when it is one
 * (RFC 6749 §5.2: a short token such as `invalid_grant`), never a token, the client secret or the
 * server's free text (`error_description`, a body, a `token_type` that is no token): the message
 * reaches the person's tool error and `/status.lastExchangeError`, and an authorization server's
 * text there could be anything (a look-alike "store your credential here" link).
 */
import type { TokenExchangeAuth } from './serverAuth';
import { SUBJECT_TOKEN_TYPE_JWT } from './SubjectTokenIssuer';

/** The grant type of RFC 8693. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** The token type the broker asks for. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** An OAuth error code or token type as the broker passes it on: a short token, nothing else. */
const OAUTH_TOKEN = /^[A-Za-z0-9_.-]{1,64}$/;

/** An access token the authorization server issued. */
export interface ExchangedToken {
  readonly accessToken: string;
  /** `expires_in` in seconds, when the server said (RFC 8693 §2.2.1: RECOMMENDED). */
  readonly expiresInS?: number;
}

/** The exchange failed; `message` is safe to show to the caller and on `/status`. */
export class TokenExchangeError extends Error {
  readonly name = 'TokenExchangeError';
  constructor(
    message: string,
    /** The authorization server's `error` code (RFC 6749 §5.2), when it gave one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Form-urlencoding of RFC 6749 Appendix B, used for Basic client credentials. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

function describeHost(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return 'the token endpoint';
  }
}

/** `value` when it is an OAuth code-like token (`invalid_grant`, `N_A`), else undefined. */
function oauthToken(value: unknown): string | undefined {
  return typeof value === 'string' && OAUTH_TOKEN.test(value) ? value : undefined;
}

/**
 * Exchanges `subjectToken` for an access token per `auth`. Rejects with TokenExchangeError
 * (refusal, malformed answer, unreachable endpoint) or the signal's abort reason.
 */
export async function exchangeToken(
  auth: TokenExchangeAuth,
  subjectToken: string,
  signal: AbortSignal,
): Promise<ExchangedToken> {
  const where = `token exchange at ${describeHost(auth.tokenEndpoint)}`;
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: subjectToken,
    subject_token_type: SUBJECT_TOKEN_TYPE_JWT,
    requested_token_type: ACCESS_TOKEN_TYPE,
  });
  if (auth.audience !== undefined) body.set('audience', auth.audience);
  if (auth.resource !== undefined) body.set('resource', auth.resource);
  if (auth.scope !== undefined) body.set('scope', auth.scope);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (auth.clientAuthentication === 'client_secret_basic') {
    const pair = `${formEncode(auth.clientId)}:${formEncode(auth.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
  } else {
    body.set('client_id', auth.clientId);
    body.set('client_secret', auth.clientSecret);
  }

  let response: Response;
  try {
    response = await fetch(auth.tokenEndpoint, { method: 'POST', headers, body, signal });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    throw new TokenExchangeError(
      `${where} failed: the endpoint is unreachable${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }
  let answer: unknown;
  try {
    answer = await response.json();
  } catch {
    if (signal.aborted) throw signal.reason;
    throw new TokenExchangeError(`${where} failed: HTTP ${response.status} without a JSON answer`);
  }
  const fields = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >;
  if (!response.ok) {
    const code = oauthToken(fields.error);
    throw new TokenExchangeError(
      `${where} was refused: HTTP ${response.status}${code === undefined ? '' : ` ${code}`}`,
      code,
    );
  }
  const accessToken = fields.access_token;
  if (typeof accessToken !== 'string' || accessToken === '' || /[\s]/.test(accessToken)) {
    throw new TokenExchangeError(`${where} answered without a usable access_token`);
  }
  // RFC 8693 §2.2.1: "Bearer" for an access token usable as one; "N_A" is not.
  if (typeof fields.token_type !== 'string' || fields.token_type.toLowerCase() !== 'bearer') {
    throw new TokenExchangeError(
      `${where} issued a token of type ${oauthToken(fields.token_type) ?? 'unknown'}, not a bearer token`,
    );
  }
  const expiresIn = fields.expires_in;
  return {
    accessToken,
    ...(typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0
      ? { expiresInS: expiresIn }
      : {}),
  };
}
