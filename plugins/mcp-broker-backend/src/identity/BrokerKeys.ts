/*
 * The broker's own keys (spec §11.1): the subject-token signing key ring and the requestState
 * HMAC key ring (KeyRing.ts), with the timings that make rotation safe, and the timer that
 * re-reads both on every replica.
 *
 * Timings, per ring:
 * - signing: a new key is published `JWKS_MAX_AGE_S` plus two check intervals before it signs
 *   (every replica and every verifier's cached JWK Set knows it first); an old key stays for a
 *   subject token's lifetime plus the clock skew plus a check interval after its successor
 *   activated (every token it signed has expired).
 * - requestState: a new key is published two check intervals before it seals; an old key opens
 *   for `elicitationTtl` plus the clock skew plus a check interval after its successor activated.
 * With `mcpBroker.requestStateSecret` configured, that secret seals and opens instead of the ring
 * (the operator rotates it).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { randomBytes } from 'node:crypto';
import type { HmacKeys } from '../inputRequests/requestStateKey';
import { fixedHmacKeys, MIN_REQUEST_STATE_KEY_BYTES } from '../inputRequests/requestStateKey';
import type { BrokerKeyStore } from './brokerKeyStores';
import type { CredentialCipher } from './CredentialCipher';
import { KeyRing } from './KeyRing';
import {
  generateSigningKeyMaterial,
  JWKS_MAX_AGE_S,
  SUBJECT_TOKEN_LIFETIME_S,
} from './SubjectTokenIssuer';

/** `mcpBroker.keyRotation`, in milliseconds (read by keyRotationConfig.ts). */
export interface KeyRotationConfig {
  /** Age at which a new signing key is made. */
  readonly signingKeyMaxAgeMs: number;
  /** Age at which a new requestState key is made. */
  readonly requestStateKeyMaxAgeMs: number;
  /** How often every replica re-reads the rings. */
  readonly checkIntervalMs: number;
  /** Clock difference allowed between the broker and a verifier. */
  readonly clockSkewMs: number;
}

/** What {@link BrokerKeys.create} needs. */
export interface BrokerKeysOptions {
  store: BrokerKeyStore;
  /** The key-encryption key (`credentialEncryptionKey`); undefined only with a memory store. */
  cipher: CredentialCipher | undefined;
  rotation: KeyRotationConfig;
  /** `mcpBroker.elicitationTtl`: how long a requestState lives. */
  elicitationTtlMs: number;
  /** `mcpBroker.requestStateSecret`, when configured. */
  requestStateSecret?: Buffer;
  logger: LoggerService;
  /** Epoch ms; tests pass their own clock. */
  now?: () => number;
}

/** The broker's signing and requestState keys; see the file comment. */
export class BrokerKeys {
  private constructor(
    /** The subject-token signing keys. */
    readonly signing: KeyRing,
    /** The requestState (and credential retry state) HMAC keys. */
    readonly requestState: HmacKeys,
    private readonly timer: NodeJS.Timeout,
  ) {}

  /**
   * Loads both rings (converting keys stored in plain text, adding a first or due key) and
   * re-reads them every check interval. Rejects — start-up fails — when a stored key cannot be
   * opened with the configured key-encryption keys.
   */
  static async create(options: BrokerKeysOptions): Promise<BrokerKeys> {
    const { rotation, store, cipher, now } = options;
    const interval = rotation.checkIntervalMs;
    const signing = new KeyRing({
      purpose: 'subject-token',
      store,
      cipher,
      now,
      generate: generateSigningKeyMaterial,
      maxAgeMs: rotation.signingKeyMaxAgeMs,
      publishAheadMs: JWKS_MAX_AGE_S * 1000 + 2 * interval,
      retainMs: SUBJECT_TOKEN_LIFETIME_S * 1000 + rotation.clockSkewMs + interval,
    });
    const rings = [signing];
    let requestState: HmacKeys;
    if (options.requestStateSecret !== undefined) {
      requestState = fixedHmacKeys(options.requestStateSecret);
    } else {
      const ring = new KeyRing({
        purpose: 'request-state',
        store,
        cipher,
        now,
        generate: () => randomBytes(MIN_REQUEST_STATE_KEY_BYTES).toString('base64url'),
        maxAgeMs: rotation.requestStateKeyMaxAgeMs,
        publishAheadMs: 2 * interval,
        retainMs: options.elicitationTtlMs + rotation.clockSkewMs + interval,
      });
      rings.push(ring);
      requestState = hmacKeysOf(ring);
    }
    for (const ring of rings) await ring.load();
    const timer = setInterval(() => {
      for (const ring of rings) {
        ring.load().catch(error => {
          options.logger.warn(
            `MCP broker: could not reload the ${ring.purpose} keys (the last ones stay in use): ${
              error instanceof Error ? error.message : error
            }`,
          );
        });
      }
    }, interval);
    timer.unref();
    return new BrokerKeys(signing, requestState, timer);
  }

  /** Stops re-reading the rings. */
  close(): void {
    clearInterval(this.timer);
  }
}

function hmacKeysOf(ring: KeyRing): HmacKeys {
  const bytes = (material: string) => Buffer.from(material, 'base64url');
  return {
    sealingKey: () => bytes(ring.current().material),
    openingKeys: () => ring.all().map(key => bytes(key.material)),
  };
}
