/*
 * `mcpBroker.kubernetes`: where the broker finds MCPServerRegistration resources. Read at
 * plugin start; every problem is an InputError naming the key.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import {
  DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  isNamespaceName,
  readKubeConfigSource,
  readPositiveDurationMs,
  type KubeConfigSource,
} from '@devportal/backend-kubernetes-client';

/** The config section this file reads, for messages. */
export const KUBERNETES_CONFIG_PATH = 'mcpBroker.kubernetes';

/** Kubernetes discovery settings, with defaults applied. */
export interface KubernetesDiscoveryConfig {
  readonly source: KubeConfigSource;
  /** Namespaces to watch; undefined = the whole cluster (one cluster-wide watch). */
  readonly namespaces?: readonly string[];
  /** Only registrations matching this label selector. */
  readonly labelSelector?: string;
  /** Timeout of each list/get request (a watch is long-lived and has none). */
  readonly requestTimeoutMs: number;
  /** How a registration's HTTPRoute hostname becomes a URL. */
  readonly routes: { readonly scheme: 'http' | 'https'; readonly port?: number };
  /** How often every registration's HTTPRoute and Secret are read again. */
  readonly resyncIntervalMs: number;
  /** Backoff between failed list/watch attempts. */
  readonly backoff: { readonly initialDelayMs: number; readonly maxDelayMs: number };
}

const DEFAULT_RESYNC_INTERVAL_MS = 5 * 60_000;

function durationMs(section: Config, key: string, fallbackMs: number): number {
  return readPositiveDurationMs(section, key, { configPath: KUBERNETES_CONFIG_PATH, fallbackMs });
}

/** Reads `mcpBroker.kubernetes`; undefined when absent or `enabled: false`. */
export function readKubernetesDiscoveryConfig(root: Config): KubernetesDiscoveryConfig | undefined {
  const section = root.getOptionalConfig('mcpBroker.kubernetes');
  if (!section || section.getOptionalBoolean('enabled') === false) return undefined;
  const source: KubeConfigSource = readKubeConfigSource(section, KUBERNETES_CONFIG_PATH);

  const namespaces = section.getOptionalStringArray('namespaces');
  for (const [i, ns] of (namespaces ?? []).entries()) {
    if (!isNamespaceName(ns)) {
      throw new InputError(
        `Invalid mcpBroker.kubernetes.namespaces[${i}] "${ns}": not a namespace name`,
      );
    }
  }
  const scheme = section.getOptionalString('routes.scheme') ?? 'http';
  if (scheme !== 'http' && scheme !== 'https') {
    throw new InputError('Invalid mcpBroker.kubernetes.routes.scheme: use "http" or "https"');
  }
  const port = section.getOptionalNumber('routes.port');
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new InputError('Invalid mcpBroker.kubernetes.routes.port: use a port number (1-65535)');
  }
  return {
    source,
    namespaces: namespaces && namespaces.length > 0 ? namespaces : undefined,
    labelSelector: section.getOptionalString('labelSelector'),
    requestTimeoutMs: durationMs(section, 'requestTimeout', DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS),
    routes: { scheme, port },
    resyncIntervalMs: durationMs(section, 'resyncInterval', DEFAULT_RESYNC_INTERVAL_MS),
    backoff: {
      initialDelayMs: durationMs(section, 'retry.initialDelay', 500),
      maxDelayMs: durationMs(section, 'retry.maxDelay', 30_000),
    },
  };
}
