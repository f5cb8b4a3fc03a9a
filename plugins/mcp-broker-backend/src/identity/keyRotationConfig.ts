/*
 * `mcpBroker.keyRotation`: how the broker's own keys rotate (KeyRing.ts), read once at start-up.
 * A bad value fails start-up naming the key.
 */
import { readDurationFromConfig, type Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';

/** Default age at which a new signing key (and requestState key) is made: 30 days. */
export const DEFAULT_KEY_MAX_AGE_MS = 30 * 24 * 60 * 60_000;
/** Default interval at which every replica re-reads the key rings: 1 minute. */
export const DEFAULT_KEY_CHECK_INTERVAL_MS = 60_000;
/** Default clock difference allowed between the broker and a token's verifier: 1 minute. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;

/** `mcpBroker.keyRotation`, in milliseconds. */
export interface KeyRotationConfig {
  readonly signingKeyMaxAgeMs: number;
  readonly requestStateKeyMaxAgeMs: number;
  readonly checkIntervalMs: number;
  readonly clockSkewMs: number;
}

function durationMs(section: Config | undefined, key: string, fallbackMs: number): number {
  if (section === undefined || !section.has(key)) return fallbackMs;
  const at = `mcpBroker.keyRotation.${key}`;
  let ms: number;
  try {
    ms = durationToMilliseconds(readDurationFromConfig(section, { key }));
  } catch (error) {
    throw new InputError(
      `Invalid duration at ${at}: ${(error as Error).message}. Use e.g. { days: 30 } or "30d"`,
    );
  }
  if (!Number.isFinite(ms) || ms < 1000) {
    throw new InputError(`Invalid duration at ${at}: must be at least one second`);
  }
  return ms;
}

/** Reads `mcpBroker.keyRotation` from the root config, with defaults. */
export function readKeyRotationConfig(config: Config): KeyRotationConfig {
  const section = config.getOptionalConfig('mcpBroker.keyRotation');
  return {
    signingKeyMaxAgeMs: durationMs(section, 'signingKeyMaxAge', DEFAULT_KEY_MAX_AGE_MS),
    requestStateKeyMaxAgeMs: durationMs(section, 'requestStateKeyMaxAge', DEFAULT_KEY_MAX_AGE_MS),
    checkIntervalMs: durationMs(section, 'checkInterval', DEFAULT_KEY_CHECK_INTERVAL_MS),
    clockSkewMs: durationMs(section, 'clockSkew', DEFAULT_CLOCK_SKEW_MS),
  };
}
