/*
 * The config keys every Kubernetes client of the plugins reads the same way (`inCluster`,
 * `kubeconfig`, `context`, durations such as `requestTimeout`, namespace names), under the
 * plugin's own section (`portal.kubernetes`, `mcpBroker.kubernetes`). Read once at plugin start;
 * every problem is an InputError that names the full key to fix.
 */
import { readDurationFromConfig, type Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';

/**
 * Where a client's credentials come from: the pod's service account, a kubeconfig file, or
 * (neither given) client-node's defaults (`$KUBECONFIG`, `~/.kube/config`, in-cluster).
 *
 * @public
 */
export type KubeConfigSource =
  | { type: 'in-cluster' }
  | { type: 'kubeconfig'; path: string; context?: string }
  | { type: 'default'; context?: string };

/**
 * Default time one request to the API server may take before it counts as failed.
 *
 * @public
 */
export const DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS = 10_000;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Reads `inCluster`, `kubeconfig` and `context` of `section` (absent = client-node's defaults).
 * `configPath` is the section's path, e.g. `portal.kubernetes`, for messages.
 *
 * @public
 */
export function readKubeConfigSource(
  section: Config | undefined,
  configPath: string,
): KubeConfigSource {
  const inCluster = section?.getOptionalBoolean('inCluster') ?? false;
  const path = section?.getOptionalString('kubeconfig');
  const context = section?.getOptionalString('context');
  if (inCluster && (path !== undefined || context !== undefined)) {
    throw new InputError(
      `${configPath}: set either inCluster or kubeconfig/context, not both ` +
        '(inCluster cannot be combined with them: choose one way to reach the cluster)',
    );
  }
  if (inCluster) return { type: 'in-cluster' };
  if (path !== undefined) return { type: 'kubeconfig', path, context };
  return { type: 'default', context };
}

/**
 * Reads a positive duration `key` of `section` in milliseconds, or `fallbackMs` when it is
 * absent. Accepts what `readDurationFromConfig` does (`"10s"`, `{ seconds: 10 }`).
 *
 * @public
 */
export function readPositiveDurationMs(
  section: Config | undefined,
  key: string,
  options: { configPath: string; fallbackMs: number },
): number {
  if (section === undefined || !section.has(key)) return options.fallbackMs;
  let ms: number | undefined;
  try {
    ms = durationToMilliseconds(readDurationFromConfig(section, { key }));
  } catch {
    // reported below, with the key and an example
  }
  if (ms === undefined || !(ms > 0)) {
    throw new InputError(
      `Invalid ${options.configPath}.${key}: ` +
        'use a positive duration, e.g. "10s" or { seconds: 10 }',
    );
  }
  return ms;
}

/**
 * Whether `name` can name a namespace (a lowercase DNS-1123 label of at most 63 characters).
 *
 * @public
 */
export function isNamespaceName(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}
