/*
 * The portal's configuration (see config.d.ts), read once at start-up into a typed
 * object with named defaults.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';

/** Where products and keys live. */
export type PortalStorage = 'database' | 'kubernetes';

/** The default of `portal.storage`. */
export const DEFAULT_PORTAL_STORAGE: PortalStorage = 'database';

/** The default of `portal.notifications.requestUrlTemplate`. */
export const DEFAULT_REQUEST_URL_TEMPLATE = '/portal/requests/{namespace}/{name}';
/** The default of `portal.notifications.requestsUrl`. */
export const DEFAULT_REQUESTS_URL = '/portal/requests';

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
  notificationLinks: NotificationLinks;
}

/** Reads and checks the `portal` section (and `permission.enabled`). */
export function readPortalConfig(config: Config): PortalConfig {
  const storage =
    config.getOptionalString('portal.storage') ?? DEFAULT_PORTAL_STORAGE;
  if (storage !== 'database' && storage !== 'kubernetes') {
    throw new InputError(
      `portal.storage must be "database" or "kubernetes", got "${storage}"`,
    );
  }
  return {
    storage,
    manifests: config.getOptionalStringArray('portal.manifests') ?? [],
    permissionEnabled: config.getOptionalBoolean('permission.enabled') ?? false,
    notificationLinks: {
      requestUrlTemplate:
        config.getOptionalString('portal.notifications.requestUrlTemplate') ??
        DEFAULT_REQUEST_URL_TEMPLATE,
      requestsUrl:
        config.getOptionalString('portal.notifications.requestsUrl') ??
        DEFAULT_REQUESTS_URL,
    },
  };
}
