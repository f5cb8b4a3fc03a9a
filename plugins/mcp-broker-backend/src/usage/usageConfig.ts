/*
 * `mcpBroker.usage` (docs/contracts/mcp-access.md §6.8, §7.2), read once at start-up: how often
 * each replica flushes its usage counts, and how long rows are kept. An invalid value fails
 * start-up naming its key.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { readOptionalDurationMs } from '../config';

/** Default `usage.flushInterval`: 30 seconds. */
export const DEFAULT_USAGE_FLUSH_INTERVAL_MS = 30_000;
/** Default `usage.retention`: 90 days. */
export const DEFAULT_USAGE_RETENTION_DAYS = 90;
/** The shortest and longest `usage.retention`, in days. */
export const USAGE_RETENTION_DAYS_RANGE = { min: 1, max: 400 } as const;

const DAY_MS = 86_400_000;

/** `mcpBroker.usage`, typed. */
export interface UsageConfig {
  readonly flushIntervalMs: number;
  /** Rows of days before today − retentionDays (UTC) are deleted. */
  readonly retentionDays: number;
}

/** Reads `mcpBroker.usage`; see the file comment. */
export function readUsageConfig(root: Config): UsageConfig {
  const config = root.getOptionalConfig('mcpBroker.usage');
  if (config === undefined) {
    return {
      flushIntervalMs: DEFAULT_USAGE_FLUSH_INTERVAL_MS,
      retentionDays: DEFAULT_USAGE_RETENTION_DAYS,
    };
  }
  const flushIntervalMs = readOptionalDurationMs(
    config,
    'flushInterval',
    'mcpBroker.usage.flushInterval',
    DEFAULT_USAGE_FLUSH_INTERVAL_MS,
    1_000,
  );
  const retentionMs = readOptionalDurationMs(
    config,
    'retention',
    'mcpBroker.usage.retention',
    DEFAULT_USAGE_RETENTION_DAYS * DAY_MS,
  );
  const retentionDays = retentionMs / DAY_MS;
  const { min, max } = USAGE_RETENTION_DAYS_RANGE;
  if (!Number.isInteger(retentionDays) || retentionDays < min || retentionDays > max) {
    throw new InputError(
      `Invalid duration at mcpBroker.usage.retention: use whole days from ${min} to ${max}, e.g. { days: 90 }`,
    );
  }
  return { flushIntervalMs, retentionDays };
}
