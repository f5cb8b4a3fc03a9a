/* AES-256-GCM of personal credentials: bound to owner and server, keys by id, rotation. */
import { randomBytes } from 'node:crypto';
import {
  CredentialCipher,
  CredentialKeyError,
  credentialKeyId,
  decodeCredentialKey,
} from './CredentialCipher';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

describe('CredentialCipher', () => {
  it('opens what it sealed, and the sealed form shows neither value nor key', () => {
    const cipher = new CredentialCipher(keyA);
    const sealed = cipher.seal('ghp_personal-token', 'user:user:default/alice', 'github');
    expect(sealed.keyId).toBe(credentialKeyId(keyA));
    expect(JSON.stringify(sealed)).not.toContain('ghp_personal-token');
    expect(JSON.stringify(sealed)).not.toContain(keyA.toString('base64'));
    expect(cipher.open(sealed, 'user:user:default/alice', 'github')).toBe('ghp_personal-token');
    // A fresh nonce per value: the same value never seals the same way twice.
    expect(
      cipher.seal('ghp_personal-token', 'user:user:default/alice', 'github').ciphertext,
    ).not.toBe(sealed.ciphertext);
  });

  it('refuses a value moved to another owner or server, or altered', () => {
    const cipher = new CredentialCipher(keyA);
    const sealed = cipher.seal('secret', 'user:user:default/alice', 'github');
    expect(() => cipher.open(sealed, 'user:user:default/carol', 'github')).toThrow(
      CredentialKeyError,
    );
    expect(() => cipher.open(sealed, 'user:user:default/alice', 'jira')).toThrow(
      CredentialKeyError,
    );
    const bytes = Buffer.from(sealed.ciphertext, 'base64url');
    bytes[0] ^= 1;
    expect(() =>
      cipher.open(
        { ...sealed, ciphertext: bytes.toString('base64url') },
        'user:user:default/alice',
        'github',
      ),
    ).toThrow(/does not decrypt/);
  });

  it('opens values of a previous key, seals with the current one, and names an unknown key', () => {
    const old = new CredentialCipher(keyA);
    const sealedWithA = old.seal('v', 'p', 's');
    const rotated = new CredentialCipher(keyB, [keyA]);
    expect(rotated.open(sealedWithA, 'p', 's')).toBe('v');
    expect(rotated.seal('v', 'p', 's').keyId).toBe(credentialKeyId(keyB));
    expect(() => new CredentialCipher(keyB).open(sealedWithA, 'p', 's')).toThrow(
      `key ${credentialKeyId(keyA)}, which is neither mcpBroker.credentialEncryptionKey nor one of mcpBroker.previousCredentialEncryptionKeys`,
    );
  });

  it('takes exactly 32 bytes of base64 (either alphabet) and names the config key otherwise', () => {
    expect(decodeCredentialKey(keyA.toString('base64'), 'k')).toEqual(keyA);
    expect(decodeCredentialKey(keyA.toString('base64url'), 'k')).toEqual(keyA);
    expect(() =>
      decodeCredentialKey(randomBytes(16).toString('base64'), 'mcpBroker.credentialEncryptionKey'),
    ).toThrow('Invalid mcpBroker.credentialEncryptionKey: must be 32 random bytes in base64');
    expect(() => decodeCredentialKey('not base64 at all!', 'k')).toThrow(CredentialKeyError);
  });
});
