/*
 * `mcpBroker.credentialEncryptionKey` and `mcpBroker.previousCredentialEncryptionKeys`: the keys
 * of stored personal credentials (CredentialCipher), read once at start-up. A malformed key, or
 * a `userCredential` server in the configuration without a key, fails start-up naming the key.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { CredentialCipher, decodeCredentialKey } from './CredentialCipher';
import type { ServerAuth } from './serverAuth';

const CURRENT_KEY = 'mcpBroker.credentialEncryptionKey';
const PREVIOUS_KEYS = 'mcpBroker.previousCredentialEncryptionKeys';

/** The configured cipher, or undefined when no key is configured. */
export function readCredentialCipher(config: Config): CredentialCipher | undefined {
  const current = config.getOptionalString(CURRENT_KEY);
  const previous = config.getOptionalStringArray(PREVIOUS_KEYS) ?? [];
  if (current === undefined) {
    if (previous.length > 0) {
      throw new InputError(
        `${PREVIOUS_KEYS} is set but ${CURRENT_KEY} is not: set the current key`,
      );
    }
    return undefined;
  }
  try {
    return new CredentialCipher(
      decodeCredentialKey(current, CURRENT_KEY),
      previous.map((key, i) => decodeCredentialKey(key, `${PREVIOUS_KEYS}[${i}]`)),
    );
  } catch (error) {
    throw new InputError((error as Error).message);
  }
}

/**
 * Fails when a configured server stores personal credentials but there is no key to encrypt
 * them with.
 */
export function requireKeyForUserCredentials(
  servers: ReadonlyArray<{ name: string; auth?: ServerAuth }>,
  cipher: CredentialCipher | undefined,
): void {
  if (cipher !== undefined) return;
  const needing = servers.find(s => s.auth?.mode === 'userCredential');
  if (needing !== undefined) {
    throw new InputError(
      `${CURRENT_KEY} is required: server "${needing.name}" uses auth.mode userCredential, whose credentials are stored encrypted (e.g. "openssl rand -base64 32")`,
    );
  }
}
