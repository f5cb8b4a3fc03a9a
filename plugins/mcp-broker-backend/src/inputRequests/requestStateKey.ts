/*
 * The HMAC keys of the broker's `requestState` (and of the credential retry states), the same on
 * every replica: config `mcpBroker.requestStateSecret` when set (at least 32 bytes; a shorter one
 * fails start-up naming the key; one key, rotated by the operator), otherwise the broker's
 * rotating request-state key ring (identity/KeyRing.ts: kept encrypted in the plugin's database
 * and shared, or — one replica without a key-encryption key — in this process). One key seals;
 * every key of the ring still opens, so a state sealed just before a rotation stays good for its
 * whole lifetime.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';

/** Smallest accepted HMAC key, in bytes. */
export const MIN_REQUEST_STATE_KEY_BYTES = 32;

/** The keys states are sealed and opened with. */
export interface HmacKeys {
  /** The key that seals now. */
  sealingKey(): Buffer;
  /** Every key that still opens (the sealing key among them). */
  openingKeys(): readonly Buffer[];
}

/** One key that seals and opens (a configured secret, or a test's key). */
export function fixedHmacKeys(key: Buffer): HmacKeys {
  return { sealingKey: () => key, openingKeys: () => [key] };
}

/** The configured `mcpBroker.requestStateSecret` as key bytes, or undefined when not set. */
export function readRequestStateSecret(config: Config): Buffer | undefined {
  const secret = config.getOptionalString('mcpBroker.requestStateSecret');
  if (secret === undefined) return undefined;
  const key = Buffer.from(secret, 'utf8');
  if (key.length < MIN_REQUEST_STATE_KEY_BYTES) {
    throw new InputError(
      `mcpBroker.requestStateSecret must be at least ${MIN_REQUEST_STATE_KEY_BYTES} bytes long ` +
        '(e.g. the output of "openssl rand -base64 32")',
    );
  }
  return key;
}
