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
 * signed with a P-256 key of the broker's subject-token key ring (KeyRing.ts: shared by every
 * replica through the plugin's database, encrypted there, rotated on a schedule); the public
 * halves of every key in the ring are published as a JWK Set at
 * `/api/mcp-broker/.well-known/jwks.json` (and an OpenID-style discovery document naming it) — a
 * new key ahead of its first use, an old one until every token it signed has expired — so
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
import { KeyRing, type RingKey } from './KeyRing';
import { MemoryBrokerKeyStore } from './MemoryBrokerKeyStore';

/** RFC 8693 token type of the subject token. */
export const SUBJECT_TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';
/** Lifetime of a subject token, in seconds. */
export const SUBJECT_TOKEN_LIFETIME_S = 120;
/** How long a verifier may cache the JWK Set (its `Cache-Control: max-age`), in seconds. */
export const JWKS_MAX_AGE_S = 300;

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
  /** The subject-token key ring, loaded (undefined: one key of this process only, for tests). */
  keys?: KeyRing;
  /** Seconds since the epoch; tests pass their own clock. */
  nowSeconds?: () => number;
}

/** A fresh P-256 private key as JWK JSON: the material of a subject-token key ring. */
export function generateSigningKeyMaterial(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return JSON.stringify(privateKey.export({ format: 'jwk' }));
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** Signs subject tokens for callers and publishes the verification key; see the file comment. */
export class SubjectTokenIssuer {
  readonly #privateKeys = new Map<string, KeyObject>();
  readonly #publicKeys = new Map<string, PublicSigningJwk>();

  private constructor(
    private readonly issuerUrl: string,
    private readonly keys: KeyRing,
    private readonly nowSeconds: () => number,
  ) {}

  /** An issuer over a loaded key ring (or, without one, a key of this process). */
  static async create(options: SubjectTokenIssuerOptions): Promise<SubjectTokenIssuer> {
    let keys = options.keys;
    if (keys === undefined) {
      keys = new KeyRing({
        purpose: 'subject-token',
        store: new MemoryBrokerKeyStore(),
        cipher: undefined,
        generate: generateSigningKeyMaterial,
        maxAgeMs: Number.POSITIVE_INFINITY,
        retainMs: 0,
        publishAheadMs: 0,
      });
      await keys.load();
    }
    return new SubjectTokenIssuer(
      options.issuer,
      keys,
      options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)),
    );
  }

  #privateKey(key: RingKey): KeyObject {
    let privateKey = this.#privateKeys.get(key.kid);
    if (privateKey === undefined) {
      privateKey = createPrivateKey({ key: JSON.parse(key.material), format: 'jwk' });
      this.#privateKeys.set(key.kid, privateKey);
    }
    return privateKey;
  }

  #publicJwk(key: RingKey): PublicSigningJwk {
    let jwk = this.#publicKeys.get(key.kid);
    if (jwk === undefined) {
      const { x, y } = createPublicKey(this.#privateKey(key)).export({ format: 'jwk' });
      jwk = { kty: 'EC', crv: 'P-256', x: x!, y: y!, kid: key.kid, use: 'sig', alg: 'ES256' };
      this.#publicKeys.set(key.kid, jwk);
    }
    return jwk;
  }

  /** The `iss` of the tokens. */
  get issuer(): string {
    return this.issuerUrl;
  }

  /** The JWK Set that verifies the tokens: every key of the ring, the newest first. */
  jwks(): { keys: PublicSigningJwk[] } {
    return { keys: [...this.keys.all()].reverse().map(key => this.#publicJwk(key)) };
  }

  /** A subject token stating that `subject` (a user entity ref) is calling, for `audience`. */
  issue(subject: string, audience: string): string {
    const iat = this.nowSeconds();
    const key = this.keys.current();
    const header = base64urlJson({ alg: 'ES256', typ: 'JWT', kid: key.kid });
    const claims = base64urlJson({
      iss: this.issuerUrl,
      sub: subject,
      aud: audience,
      iat,
      exp: iat + SUBJECT_TOKEN_LIFETIME_S,
      jti: randomBytes(16).toString('base64url'),
    });
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
      key: this.#privateKey(key),
      dsaEncoding: 'ieee-p1363',
    });
    return `${header}.${claims}.${signature.toString('base64url')}`;
  }
}
