/*
 * The portal's configuration (see config.d.ts), read once at start-up into a typed
 * object with named defaults.
 */
import {
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  type SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import { readDurationFromConfig, type Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';

/** Minimum HMAC key size of page tokens in bytes (`portal.pagination.tokenSecret` at least). */
export const MIN_PAGE_TOKEN_KEY_BYTES = 32;

/** Where products and keys live. */
export type PortalStorage = 'database' | 'kubernetes';

/** The default of `portal.storage`. */
export const DEFAULT_PORTAL_STORAGE: PortalStorage = 'database';

/** The default of `portal.requestBodyTimeout`: how long a request body may take to arrive. */
export const DEFAULT_REQUEST_BODY_TIMEOUT_MS = 30_000;
/** The default of `portal.notifications.requestUrlTemplate`. */
export const DEFAULT_REQUEST_URL_TEMPLATE = '/portal/requests/{namespace}/{name}';
/** The default of `portal.notifications.requestsUrl`. */
export const DEFAULT_REQUESTS_URL = '/portal/requests';

/**
 * The default of `portal.keyExpiry.schedule`: the expiry task (contract mcp-access §4.5) runs
 * every minute, for at most a minute.
 */
export const DEFAULT_KEY_EXPIRY_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { minutes: 1 },
  timeout: { minutes: 1 },
};

/** Where notifications link to (see config.d.ts). */
export interface NotificationLinks {
  /** One request: `{namespace}` and `{name}` are replaced. */
  requestUrlTemplate: string;
  /** The request list. */
  requestsUrl: string;
}

/** The portal's configuration as the plugin uses it. */
export interface PortalConfig {
  storage: PortalStorage;
  /**
   * Kubernetes manifest files (YAML, multi-document) with the read-only kinds
   * (HTTPRoute, PlanPolicy, AuthPolicy, RateLimitPolicy) for the database store. Relative
   * paths are relative to the backend's working directory. Default: none.
   */
  manifests: string[];
  /** Whether the permission framework is enabled (`permission.enabled`, default false). */
  permissionEnabled: boolean;
  /** `portal.pagination.tokenSecret`: the HMAC key of page tokens, when configured. */
  pageTokenSecret?: Buffer;
  /** How long a request body may take to arrive (`portal.requestBodyTimeout`), ms. */
  requestBodyTimeoutMs: number;
  notificationLinks: NotificationLinks;
  /** When the task that announces expired keys runs (`portal.keyExpiry.schedule`). */
  keyExpirySchedule: SchedulerServiceTaskScheduleDefinition;
}

/** Reads and checks the `portal` section (and `permission.enabled`). */
export function readPortalConfig(config: Config): PortalConfig {
  const storage = config.getOptionalString('portal.storage') ?? DEFAULT_PORTAL_STORAGE;
  if (storage !== 'database' && storage !== 'kubernetes') {
    throw new InputError(`portal.storage must be "database" or "kubernetes", got "${storage}"`);
  }
  return {
    storage,
    manifests: config.getOptionalStringArray('portal.manifests') ?? [],
    permissionEnabled: config.getOptionalBoolean('permission.enabled') ?? false,
    pageTokenSecret: readPageTokenSecret(config),
    requestBodyTimeoutMs: readRequestBodyTimeoutMs(config),
    notificationLinks: {
      requestUrlTemplate:
        config.getOptionalString('portal.notifications.requestUrlTemplate') ??
        DEFAULT_REQUEST_URL_TEMPLATE,
      requestsUrl:
        config.getOptionalString('portal.notifications.requestsUrl') ?? DEFAULT_REQUESTS_URL,
    },
    keyExpirySchedule: readKeyExpirySchedule(config),
  };
}

function readKeyExpirySchedule(config: Config): SchedulerServiceTaskScheduleDefinition {
  const key = 'portal.keyExpiry.schedule';
  if (!config.has(key)) return DEFAULT_KEY_EXPIRY_SCHEDULE;
  try {
    return readSchedulerServiceTaskScheduleDefinitionFromConfig(config.getConfig(key));
  } catch (error) {
    throw new InputError(
      `Invalid ${key}: ${(error as Error).message}. Use e.g. { frequency: { minutes: 1 }, timeout: { minutes: 1 } }`,
    );
  }
}

/** The configured page token key; too short a secret fails start-up. */
function readPageTokenSecret(config: Config): Buffer | undefined {
  const secret = config.getOptionalString('portal.pagination.tokenSecret');
  if (secret === undefined) return undefined;
  const key = Buffer.from(secret, 'utf8');
  if (key.length < MIN_PAGE_TOKEN_KEY_BYTES) {
    throw new InputError(
      `portal.pagination.tokenSecret must be at least ${MIN_PAGE_TOKEN_KEY_BYTES} bytes ` +
        'long (e.g. the output of "openssl rand -base64 32")',
    );
  }
  return key;
}

function readRequestBodyTimeoutMs(config: Config): number {
  const key = 'portal.requestBodyTimeout';
  if (!config.has(key)) return DEFAULT_REQUEST_BODY_TIMEOUT_MS;
  let ms: number;
  try {
    ms = durationToMilliseconds(readDurationFromConfig(config, { key }));
  } catch (error) {
    throw new InputError(
      `Invalid duration at ${key}: ${(error as Error).message}. Use e.g. { seconds: 30 } or "30s"`,
    );
  }
  if (!Number.isFinite(ms) || ms < 1) {
    throw new InputError(`Invalid ${key}: must be a positive duration`);
  }
  return ms;
}
