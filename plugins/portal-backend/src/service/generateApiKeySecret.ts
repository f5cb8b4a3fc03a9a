import { randomBytes } from 'node:crypto';

/** Size of a generated API key in random bytes (before base64url encoding). */
export const API_KEY_SECRET_BYTES = 32;

/** A new API key: {@link API_KEY_SECRET_BYTES} bytes from the CSPRNG, base64url. */
export function generateApiKeySecret(): string {
  return randomBytes(API_KEY_SECRET_BYTES).toString('base64url');
}
