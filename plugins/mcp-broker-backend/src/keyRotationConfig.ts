/*
 * `mcpBroker.keyRotation`: how the broker's own keys rotate (identity/BrokerKeys.ts), read once
 * at start-up. A bad value fails start-up naming the key.
 */
import type { Config } from '@backstage/config';
import { readOptionalDurationMs } from './config';
import type { KeyRotationConfig } from './identity/BrokerKeys';

/** Default age at which a new signing key (and requestState key) is made: 30 days. */
export const DEFAULT_KEY_MAX_AGE_MS = 30 * 24 * 60 * 60_000;
/** Default interval at which every replica re-reads the key rings: 1 minute. */
export const DEFAULT_KEY_CHECK_INTERVAL_MS = 60_000;
/** Default clock difference allowed between the broker and a token's verifier: 1 minute. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;
/** Shortest accepted duration of each setting: one second. */
const MINIMUM_MS = 1000;

/** Reads `mcpBroker.keyRotation` from the root config, with defaults. */
export function readKeyRotationConfig(config: Config): KeyRotationConfig {
  const section = config.getOptionalConfig('mcpBroker.keyRotation');
  const duration = (key: string, fallbackMs: number) =>
    section === undefined
      ? fallbackMs
      : readOptionalDurationMs(
          section,
          key,
          `mcpBroker.keyRotation.${key}`,
          fallbackMs,
          MINIMUM_MS,
        );
  return {
    signingKeyMaxAgeMs: duration('signingKeyMaxAge', DEFAULT_KEY_MAX_AGE_MS),
    requestStateKeyMaxAgeMs: duration('requestStateKeyMaxAge', DEFAULT_KEY_MAX_AGE_MS),
    checkIntervalMs: duration('checkInterval', DEFAULT_KEY_CHECK_INTERVAL_MS),
    clockSkewMs: duration('clockSkew', DEFAULT_CLOCK_SKEW_MS),
  };
}
