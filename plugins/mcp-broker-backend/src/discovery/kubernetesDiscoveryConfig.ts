/*
 * `mcpBroker.kubernetes`: where the broker finds MCPServerRegistration resources. Read at
 * plugin start; every problem is an InputError naming the key.
 */
import { Config, readDurationFromConfig } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';

/** How the Kubernetes client is built. */
export type KubeConfigSource =
  | { type: 'in-cluster' }
  | { type: 'kubeconfig'; path: string; context?: string }
  | { type: 'default'; context?: string };

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

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_RESYNC_INTERVAL_MS = 5 * 60_000;

function durationMs(section: Config, key: string, fallback: number): number {
  if (!section.has(key)) return fallback;
  try {
    const ms = durationToMilliseconds(readDurationFromConfig(section, { key }));
    if (ms >= 1) return ms;
  } catch {
    // reported below
  }
  throw new InputError(`Invalid mcpBroker.kubernetes.${key}: use a positive duration, e.g. { seconds: 10 }`);
}

/** Reads `mcpBroker.kubernetes`; undefined when absent or `enabled: false`. */
export function readKubernetesDiscoveryConfig(root: Config): KubernetesDiscoveryConfig | undefined {
  const section = root.getOptionalConfig('mcpBroker.kubernetes');
  if (!section || section.getOptionalBoolean('enabled') === false) return undefined;
  const inCluster = section.getOptionalBoolean('inCluster') ?? false;
  const kubeconfig = section.getOptionalString('kubeconfig');
  const context = section.getOptionalString('context');
  if (inCluster && (kubeconfig !== undefined || context !== undefined)) {
    throw new InputError('Invalid mcpBroker.kubernetes: set either inCluster or kubeconfig/context, not both');
  }
  let source: KubeConfigSource;
  if (inCluster) source = { type: 'in-cluster' };
  else if (kubeconfig !== undefined) source = { type: 'kubeconfig', path: kubeconfig, context };
  else source = { type: 'default', context };

  const namespaces = section.getOptionalStringArray('namespaces');
  for (const [i, ns] of (namespaces ?? []).entries()) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) {
      throw new InputError(`Invalid mcpBroker.kubernetes.namespaces[${i}] "${ns}": not a namespace name`);
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
    requestTimeoutMs: durationMs(section, 'requestTimeout', DEFAULT_REQUEST_TIMEOUT_MS),
    routes: { scheme, port },
    resyncIntervalMs: durationMs(section, 'resyncInterval', DEFAULT_RESYNC_INTERVAL_MS),
    backoff: {
      initialDelayMs: durationMs(section, 'retry.initialDelay', 500),
      maxDelayMs: durationMs(section, 'retry.maxDelay', 30_000),
    },
  };
}
