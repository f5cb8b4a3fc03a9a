/*
 * Encryption at rest of personal credentials (spec §11, `userCredential`): AES-256-GCM with a
 * 96-bit random nonce per value and the owner and server as additional authenticated data, so a
 * row copied onto another person or server fails to decrypt instead of lending the credential.
 *
 * Keys: `mcpBroker.credentialEncryptionKey` encrypts; it and every key of
 * `mcpBroker.previousCredentialEncryptionKeys` decrypt. Each sealed value records the id of its
 * key (a truncated SHA-256 of the key under a label: identifies, reveals nothing usable), so a
 * value is opened with exactly its own key, a value of an unknown key is named as such (a wrong
 * key fails loudly, never as garbage), and rotation is: new key first, old key into the list,
 * restart (values are re-encrypted with the new key, see PersonalCredentialService), then drop
 * the old key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Bytes of an AES-256 key. */
export const CREDENTIAL_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A credential as stored: nothing here is secret without the key. */
export interface SealedCredential {
  /** Which key sealed it ({@link CredentialCipher.currentKeyId} at the time). */
  readonly keyId: string;
  /** The GCM nonce, base64url. */
  readonly nonce: string;
  /** Ciphertext followed by the 16-byte tag, base64url. */
  readonly ciphertext: string;
}

/** A key could not be used, or a value does not open; the message names the config key. */
export class CredentialKeyError extends Error {
  readonly name = 'CredentialKeyError';
}

/** The id of a key: 16 hex digits of a labelled SHA-256 (safe to log and store). */
export function credentialKeyId(key: Buffer): string {
  return createHash('sha256')
    .update('mcp-broker personal credential key\n')
    .update(key)
    .digest('hex')
    .slice(0, 16);
}

/**
 * Decodes a configured key: base64 (standard or URL alphabet) of exactly 32 bytes, as
 * `openssl rand -base64 32` prints. `at` names the config key in the error.
 */
export function decodeCredentialKey(encoded: string, at: string): Buffer {
  const trimmed = encoded.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
    ? Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
    : Buffer.alloc(0);
  if (key.length !== CREDENTIAL_KEY_BYTES) {
    throw new CredentialKeyError(
      `Invalid ${at}: must be ${CREDENTIAL_KEY_BYTES} random bytes in base64 (e.g. the output of "openssl rand -base64 32")`,
    );
  }
  return key;
}

function additionalData(owner: string, server: string): Buffer {
  // Length-prefixed, so ("a\nb", "c") and ("a", "b\nc") never authenticate each other.
  return Buffer.from(`${owner.length}:${owner}\n${server.length}:${server}`, 'utf8');
}

/** Seals and opens personal credentials with the configured keys; see the file comment. */
export class CredentialCipher {
  private readonly keys: ReadonlyMap<string, Buffer>;

  /**
   * @param current - the key that seals (and opens)
   * @param previous - keys that only open (rotation)
   */
  constructor(
    private readonly current: Buffer,
    previous: readonly Buffer[] = [],
  ) {
    const keys = new Map<string, Buffer>();
    for (const key of [current, ...previous]) {
      if (key.length !== CREDENTIAL_KEY_BYTES) {
        throw new CredentialKeyError(`A credential key must be ${CREDENTIAL_KEY_BYTES} bytes`);
      }
      keys.set(credentialKeyId(key), key);
    }
    this.keys = keys;
  }

  /** The id of the key that seals. */
  get currentKeyId(): string {
    return credentialKeyId(this.current);
  }

  /** True when a value sealed with `keyId` can be opened. */
  knows(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** Seals `value`, bound to its owner and server. */
  seal(value: string, owner: string, server: string): SealedCredential {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(owner, server));
    const ciphertext = Buffer.concat([
      cipher.update(value, 'utf8'),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return {
      keyId: this.currentKeyId,
      nonce: nonce.toString('base64url'),
      ciphertext: ciphertext.toString('base64url'),
    };
  }

  /**
   * Opens a sealed value of `owner` for `server`. Throws CredentialKeyError when its key is not
   * configured or it does not authenticate (another key with the same id, a tampered row, or a
   * row moved to another owner or server).
   */
  open(sealed: SealedCredential, owner: string, server: string): string {
    const key = this.keys.get(sealed.keyId);
    if (key === undefined) {
      throw new CredentialKeyError(
        `A personal credential was encrypted with key ${sealed.keyId}, which is neither mcpBroker.credentialEncryptionKey nor one of mcpBroker.previousCredentialEncryptionKeys`,
      );
    }
    const data = Buffer.from(sealed.ciphertext, 'base64url');
    if (data.length < TAG_BYTES) throw new CredentialKeyError('A stored credential is truncated');
    try {
      const decipher = createDecipheriv(
        'aes-256-gcm',
        key,
        Buffer.from(sealed.nonce, 'base64url'),
        {
          authTagLength: TAG_BYTES,
        },
      );
      decipher.setAAD(additionalData(owner, server));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(data.subarray(0, data.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new CredentialKeyError(
        `A personal credential encrypted with key ${sealed.keyId} does not decrypt (altered, or stored for another person or server)`,
      );
    }
  }
}
