/*
 * A small OAuth 2.0 Token Exchange authorization server (RFC 8693) for the broker's tests: what
 * Keycloak, Entra or Okta are in production, kept to the standard so the broker is tested
 * against the protocol, not against our own expectations.
 *
 *   POST /token                               RFC 8693 §2.1 (form-encoded), answers §2.2.1 / §2.2.2
 *   GET  /jwks                                the JWK Set of the tokens it issues
 *   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
 *
 * Client authentication (RFC 6749 §2.3.1): HTTP Basic (form-urlencoded id and secret) or the
 * `client_id`/`client_secret` body parameters — never both; a wrong one is 401 `invalid_client`.
 * The subject token must be a JWT (`urn:ietf:params:oauth:token-type:jwt`) of a trusted issuer,
 * verified against that issuer's JWKS (signature, `exp`, and `aud` = the token endpoint or this
 * server's issuer); otherwise `invalid_grant`. `audience` / `resource` must be among the allowed
 * targets (`invalid_target` otherwise). The issued access token is an ES256 JWT: `sub` of the
 * subject, `aud` the requested audience (and resource), `act: { sub: <client id> }` (RFC 8693
 * §4.1: the broker acts for the person), `scope`, `client_id`, `exp`.
 *
 * Test controls: the token lifetime (`tokenLifetimeS`), a failure to answer next (`failNext`),
 * and a record of the exchanges (who, for what; never a token).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JWTPayload,
  type KeyLike,
} from 'jose';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** An issuer whose JWTs are accepted as subject tokens. */
export interface TrustedIssuer {
  /** The `iss` claim. */
  issuer: string;
  /** Where its JWK Set is. */
  jwksUrl: string;
}

/** Options of {@link startTokenExchangeServer}. */
export interface TokenExchangeServerOptions {
  /** Registered clients: id → secret. */
  clients: Record<string, string>;
  /** Issuers of acceptable subject tokens (their `iss` must match one of these). */
  trustedIssuers: TrustedIssuer[];
  /** `audience` / `resource` values a client may ask for. */
  allowedTargets: string[];
  /** Lifetime of issued tokens; default 300 s (changeable: `tokenLifetimeS`). */
  tokenLifetimeS?: number;
}

/** One exchange the server answered (no token in it). */
export interface RecordedExchange {
  clientId: string;
  subject: string;
  audience?: string;
  resource?: string;
  scope?: string;
  /** The `jti` of the issued token. */
  tokenId: string;
  expiresInS: number;
}

/** A failure the next exchange answers with (RFC 6749 §5.2). */
export interface InjectedFailure {
  status: number;
  error: string;
  description?: string;
}

/** A running token exchange server. */
export interface TokenExchangeServer {
  /** `http://127.0.0.1:<port>`, also its `iss`. */
  issuer: string;
  tokenEndpoint: string;
  jwksUrl: string;
  /** Lifetime of tokens issued from now on, in seconds. */
  tokenLifetimeS: number;
  /** The exchanges answered so far, oldest first. */
  readonly exchanges: readonly RecordedExchange[];
  /** Answers the next exchange with this error instead. */
  failNext(failure: InjectedFailure): void;
  /** Trusts one more issuer of subject tokens (e.g. a broker whose address is known later). */
  trust(issuer: TrustedIssuer): void;
  close(): Promise<void>;
}

class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function json(res: http.ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/** `aud` of an issued token: the one target asked for, all of them, or else the client itself. */
function audienceOf(targets: string[], clientId: string): string | string[] {
  if (targets.length === 0) return clientId;
  return targets.length === 1 ? targets[0] : targets;
}

/** Starts the server on a free loopback port. */
export async function startTokenExchangeServer(
  options: TokenExchangeServerOptions,
): Promise<TokenExchangeServer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomBytes(8).toString('base64url');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'ES256' };
  const subjectKeys = new Map(
    options.trustedIssuers.map(t => [t.issuer, createRemoteJWKSet(new URL(t.jwksUrl))]),
  );
  const exchanges: RecordedExchange[] = [];
  let injected: InjectedFailure | undefined;
  let issuer = '';
  const settings = { tokenLifetimeS: options.tokenLifetimeS ?? 300 };

  const clientOf = (req: http.IncomingMessage, form: URLSearchParams): string => {
    const header = req.headers.authorization;
    const inBody = form.has('client_id') || form.has('client_secret');
    let id: string | undefined;
    let secret: string | undefined;
    if (header !== undefined) {
      if (inBody) {
        throw new OAuthError(400, 'invalid_request', 'use one client authentication method');
      }
      const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header);
      const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new OAuthError(401, 'invalid_client', 'malformed Basic credentials');
      const formDecode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
      id = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
    } else {
      id = form.get('client_id') ?? undefined;
      secret = form.get('client_secret') ?? undefined;
    }
    if (id === undefined || secret === undefined || options.clients[id] !== secret) {
      throw new OAuthError(401, 'invalid_client', 'client authentication failed');
    }
    return id;
  };

  const verifySubject = async (token: string): Promise<JWTPayload> => {
    let iss: unknown;
    try {
      iss = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).iss;
    } catch {
      throw new OAuthError(400, 'invalid_grant', 'subject_token is not a JWT');
    }
    const keys = typeof iss === 'string' ? subjectKeys.get(iss) : undefined;
    if (keys === undefined) {
      throw new OAuthError(400, 'invalid_grant', 'subject_token issuer is not trusted');
    }
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: iss as string,
        audience: [`${issuer}/token`, issuer],
        algorithms: ['ES256'],
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') {
        throw new OAuthError(400, 'invalid_grant', 'subject_token has no sub');
      }
      return payload;
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw new OAuthError(
        400,
        'invalid_grant',
        `subject_token rejected: ${(error as Error).message}`,
      );
    }
  };

  const exchange = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const form = await readForm(req);
    const clientId = clientOf(req, form);
    if (injected !== undefined) {
      const failure = injected;
      injected = undefined;
      throw new OAuthError(failure.status, failure.error, failure.description ?? failure.error);
    }
    if (form.get('grant_type') !== GRANT) {
      throw new OAuthError(400, 'unsupported_grant_type', 'only token exchange is supported');
    }
    const subjectToken = form.get('subject_token');
    const subjectTokenType = form.get('subject_token_type');
    if (subjectToken === null || subjectTokenType === null) {
      throw new OAuthError(
        400,
        'invalid_request',
        'subject_token and subject_token_type are required',
      );
    }
    if (subjectTokenType !== JWT_TYPE) {
      throw new OAuthError(
        400,
        'invalid_request',
        `unsupported subject_token_type ${subjectTokenType}`,
      );
    }
    const requested = form.get('requested_token_type');
    if (requested !== null && requested !== ACCESS_TOKEN_TYPE) {
      throw new OAuthError(400, 'invalid_request', `cannot issue ${requested}`);
    }
    if (form.has('actor_token')) {
      throw new OAuthError(400, 'invalid_request', 'actor tokens are not supported');
    }
    const audience = form.getAll('audience');
    const resource = form.getAll('resource');
    const targets = [...audience, ...resource];
    for (const target of targets) {
      if (!options.allowedTargets.includes(target)) {
        throw new OAuthError(400, 'invalid_target', `${target} is not a known audience`);
      }
    }
    const subject = await verifySubject(subjectToken);
    const scope = form.get('scope') ?? undefined;
    const lifetime = settings.tokenLifetimeS;
    const tokenId = randomBytes(12).toString('base64url');
    const accessToken = await new SignJWT({
      act: { sub: clientId },
      client_id: clientId,
      ...(scope === undefined ? {} : { scope }),
    })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(subject.sub as string)
      .setAudience(audienceOf(targets, clientId))
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetime)
      .setJti(tokenId)
      .sign(privateKey as KeyLike);
    exchanges.push({
      clientId,
      subject: subject.sub as string,
      ...(audience[0] === undefined ? {} : { audience: audience[0] }),
      ...(resource[0] === undefined ? {} : { resource: resource[0] }),
      ...(scope === undefined ? {} : { scope }),
      tokenId,
      expiresInS: lifetime,
    });
    json(res, 200, {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: lifetime,
      ...(scope === undefined ? {} : { scope }),
    });
  };

  const serveExchange = (req: http.IncomingMessage, res: http.ServerResponse) => {
    exchange(req, res).catch(error => {
      if (error instanceof OAuthError) {
        const challenge =
          error.status === 401 && req.headers.authorization !== undefined
            ? { 'www-authenticate': 'Basic realm="token"' }
            : {};
        json(
          res,
          error.status,
          { error: error.error, error_description: error.description },
          challenge,
        );
      } else {
        json(res, 500, { error: 'server_error', error_description: String(error) });
      }
    });
  };

  const httpServer = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/jwks') {
      json(res, 200, { keys: [publicJwk] });
    } else if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      json(res, 200, {
        issuer,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        grant_types_supported: [GRANT],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    } else if (path !== '/token') {
      json(res, 404, { error: 'not_found' });
    } else if (req.method !== 'POST') {
      json(res, 405, { error: 'invalid_request' }, { allow: 'POST' });
    } else {
      serveExchange(req, res);
    }
  });
  await new Promise<void>(resolve => httpServer.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;

  return {
    issuer,
    tokenEndpoint: `${issuer}/token`,
    jwksUrl: `${issuer}/jwks`,
    get tokenLifetimeS() {
      return settings.tokenLifetimeS;
    },
    set tokenLifetimeS(seconds: number) {
      settings.tokenLifetimeS = seconds;
    },
    exchanges,
    failNext(failure) {
      injected = failure;
    },
    trust(trusted) {
      subjectKeys.set(trusted.issuer, createRemoteJWKSet(new URL(trusted.jwksUrl)));
    },
    close: () =>
      new Promise<void>(resolve => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      }),
  };
}
