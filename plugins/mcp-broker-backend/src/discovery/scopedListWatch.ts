/*
 * The list+watch loops of one resource type the broker reads (MCPServerRegistration,
 * MCPVirtualServer), with `mcpBroker.kubernetes`'s settings: one loop per scope (the cluster, or
 * each configured namespace) of the shared `runListWatch` (resume after a dropped watch, re-list
 * on 410 Gone, exponential backoff on errors, forever, until the signal aborts). A list replaces
 * what the sink holds of its scope in one batch (so its changes are announced once); watch
 * events upsert or remove single objects.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { runListWatch } from '@devportal/backend-kubernetes-client';
import type * as k8s from '@kubernetes/client-node';
import { ExponentialBackoff } from '../backend/ExponentialBackoff';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import type { KubeObjectLike } from './registrationTypes';

/** A namespaced custom resource type. */
export interface WatchedResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

/** Where the loops put what they see; keys are `<namespace>/<name>`. */
export interface ScopedObjectSink {
  /** The keys held now. */
  keys(): Iterable<string>;
  upsert(key: string, object: KubeObjectLike): void;
  remove(key: string): void;
  /** Runs `apply` (a whole list's changes) so that its effects are announced once, at its end. */
  batch(apply: () => void): void;
}

/** Options of {@link startScopedListWatches}. */
export interface ScopedListWatchOptions {
  config: KubernetesDiscoveryConfig;
  kubeConfig: k8s.KubeConfig;
  lib: typeof k8s;
  logger: LoggerService;
  resource: WatchedResource;
  sink: ScopedObjectSink;
}

/** Running list/watch loops; `stop` ends them and resolves once they have ended. */
export interface ScopedListWatch {
  stop(): Promise<void>;
}

/** Starts one loop per scope; each promise settles once `signal` aborts. */
export function startScopedListWatches(options: ScopedListWatchOptions): ScopedListWatch {
  const { config, sink } = options;
  const lifetime = new AbortController();
  const loops = (config.namespaces ?? [undefined]).map(namespace =>
    runListWatch({
      lib: options.lib,
      kubeConfig: options.kubeConfig,
      resource: options.resource,
      namespace,
      labelSelector: config.labelSelector,
      requestTimeoutMs: config.requestTimeoutMs,
      backoff: new ExponentialBackoff(config.backoff.initialDelayMs, config.backoff.maxDelayMs),
      logger: options.logger,
      signal: lifetime.signal,
      onList: items => sink.batch(() => replaceScope(sink, namespace, items as KubeObjectLike[])),
      onEvent: (type, object) => {
        const key = keyOf(object as KubeObjectLike);
        if (type === 'DELETED') sink.remove(key);
        else sink.upsert(key, object as KubeObjectLike);
      },
    }),
  );
  return {
    async stop() {
      lifetime.abort();
      await Promise.all(loops);
    },
  };
}

/** The key of an object: `<namespace>/<name>`. */
function keyOf(object: KubeObjectLike): string {
  return `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;
}

/** True when `next` differs from `previous` in more than its status (spec, annotations, generation). */
export function changesMoreThanStatus(previous: KubeObjectLike, next: KubeObjectLike): boolean {
  const relevant = (o: KubeObjectLike) =>
    JSON.stringify([o.spec ?? null, o.metadata?.annotations ?? null, o.metadata?.generation]);
  return relevant(previous) !== relevant(next);
}

function replaceScope(
  sink: ScopedObjectSink,
  namespace: string | undefined,
  items: KubeObjectLike[],
) {
  const seen = new Set<string>();
  for (const item of items) {
    const key = keyOf(item);
    seen.add(key);
    sink.upsert(key, item);
  }
  for (const key of [...sink.keys()]) {
    if (!seen.has(key) && (namespace === undefined || key.startsWith(`${namespace}/`))) {
      sink.remove(key);
    }
  }
}
