/*
 * The subject token of a token exchange (spec §11, `tokenExchange`): what the broker presents to
 * the authorization server as "the calling user".
 *
 * It is NOT the client's Backstage token. That token is valid for every Backstage plugin for up
 * to an hour (spec §10), may be a static service token, and sending it to another party is the
 * token passthrough the MCP security practices forbid. Instead the broker — which has just
 * verified the caller through Backstage — states who the caller is in a JWT of its own:
 *   header  { alg: ES256, typ: JWT, kid }
 *   claims  { iss: <broker base URL>, sub: <user entity ref>, aud: <token endpoint or configured>,
 *             iat, exp: iat + 120 s, jti }
 * signed with a P-256 key pair that the first replica generates and every replica shares through
 * the plugin's database; the public half is published as a JWK Set at
 * `/api/mcp-broker/.well-known/jwks.json` (and an OpenID-style discovery document naming it), so
 * an authorization server trusts the broker as an issuer the standard way (Keycloak: an OpenID
 * Connect identity provider with that JWKS URL; others: a trusted/federated issuer) and
 * validates the token as `urn:ietf:params:oauth:token-type:jwt`. The token names the person and
 * nothing else, lives two minutes and is good only at the audience it names.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  type KeyObject,
} from 'node:crypto';
import type { PrivateSigningJwk, SigningKeyStore } from './personalCredentialStores';

/** RFC 8693 token type of the subject token. */
export const SUBJECT_TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';
/** Lifetime of a subject token, in seconds. */
export const SUBJECT_TOKEN_LIFETIME_S = 120;

/** A public key of the JWK Set. */
export interface PublicSigningJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  use: 'sig';
  alg: 'ES256';
}

/** Options of {@link SubjectTokenIssuer.create}. */
export interface SubjectTokenIssuerOptions {
  /** `iss` of every token: the broker's external base URL, e.g. `https://backstage/api/mcp-broker`. */
  issuer: string;
  /** Where the shared key is kept (undefined: a key of this process only). */
  keys?: SigningKeyStore;
  /** Seconds since the epoch; tests pass their own clock. */
  nowSeconds?: () => number;
}

function freshKey(): PrivateSigningJwk {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: randomBytes(12).toString('base64url') };
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Signs subject tokens for callers and publishes the verification key; see the file comment. */
export class SubjectTokenIssuer {
  private constructor(
    private readonly issuerUrl: string,
    private readonly privateKey: KeyObject,
    private readonly publicJwk: PublicSigningJwk,
    private readonly nowSeconds: () => number,
  ) {}

  /** Loads (or, on a fresh database, creates) the shared key. */
  static async create(options: SubjectTokenIssuerOptions): Promise<SubjectTokenIssuer> {
    const candidate = freshKey();
    const jwk = options.keys ? await options.keys.signingKey(candidate) : candidate;
    const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
    const { x, y } = createPublicKey(privateKey).export({ format: 'jwk' });
    return new SubjectTokenIssuer(
      options.issuer,
      privateKey,
      { kty: 'EC', crv: 'P-256', x: x!, y: y!, kid: jwk.kid, use: 'sig', alg: 'ES256' },
      options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)),
    );
  }

  /** The `iss` of the tokens. */
  get issuer(): string {
    return this.issuerUrl;
  }

  /** The JWK Set that verifies the tokens. */
  jwks(): { keys: PublicSigningJwk[] } {
    return { keys: [this.publicJwk] };
  }

  /** A subject token stating that `subject` (a user entity ref) is calling, for `audience`. */
  issue(subject: string, audience: string): string {
    const iat = this.nowSeconds();
    const header = base64urlJson({ alg: 'ES256', typ: 'JWT', kid: this.publicJwk.kid });
    const claims = base64urlJson({
      iss: this.issuerUrl,
      sub: subject,
      aud: audience,
      iat,
      exp: iat + SUBJECT_TOKEN_LIFETIME_S,
      jti: randomBytes(16).toString('base64url'),
    });
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${header}.${claims}.${signature.toString('base64url')}`;
  }
}
