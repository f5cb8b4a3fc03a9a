/*
 * One list+watch loop over a custom resource in one scope (a namespace, or the whole cluster),
 * with @kubernetes/client-node 1.4.
 *
 * list (remember the list's resourceVersion) → watch from it (with bookmarks) → on a dropped or
 * cleanly ended watch resume from the last seen resourceVersion (no re-list, so no duplicate
 * events) → on 410 Gone re-list → on errors back off and try again, forever, until the signal
 * aborts. client-node's informer stops after errors other than 410, hence this loop instead.
 *
 * Guarantees: `onList` receives every complete list (the caller replaces its view of the scope);
 * `onEvent` receives ADDED/MODIFIED/DELETED in the API server's order; no callback runs after
 * the returned promise resolved. A watch that stays silent past its server-side timeout plus a
 * grace period (a half-open socket after a network partition) is abandoned and resumed, so it
 * cannot stall the loop. Failures are logged with status and reason only, never a body.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type * as k8s from '@kubernetes/client-node';
import { describeKubernetesFailure } from './kubernetesFailures';
import { requestTimeoutOptions } from './requestOptions';

/** A watch that ends sooner than this counts as a failed attempt (backoff before the next). */
const QUICK_END_MS = 1000;
/** Each watch asks the API server to end it after this long (`timeoutSeconds`). */
const WATCH_TIMEOUT_SECONDS = 300;
/** ... and is abandoned this long after that if it is still open. */
const WATCH_GRACE_MS = 30_000;

/**
 * The delays between failed attempts (e.g. an exponential backoff with jitter).
 *
 * @public
 */
export interface ListWatchBackoff {
  /** The delay before the next attempt; each call counts one failed attempt. */
  nextDelayMs(): number;
  /** After a healthy watch: the next failure starts from the first delay again. */
  reset(): void;
}

/**
 * An object as the list or the watch delivers it (the parts the loop reads).
 *
 * @public
 */
export interface WatchedObject {
  metadata?: { namespace?: string; name?: string; resourceVersion?: string };
  [key: string]: unknown;
}

/**
 * Options of {@link runListWatch}.
 *
 * @public
 */
export interface ListWatchOptions {
  /** The client-node module and the kubeconfig (see `loadKubernetesClient`). */
  lib: typeof k8s;
  kubeConfig: k8s.KubeConfig;
  /** The custom resource to list and watch. */
  resource: { group: string; version: string; plural: string; kind: string };
  /** The namespace to watch; undefined = the whole cluster. */
  namespace?: string;
  labelSelector?: string;
  /** Timeout of each list request (a watch is long-lived and has its own limit). */
  requestTimeoutMs: number;
  backoff: ListWatchBackoff;
  logger: LoggerService;
  /** Ends the loop (and the current list or watch) when aborted. */
  signal: AbortSignal;
  /** Every complete list of the scope. */
  onList(items: WatchedObject[]): void;
  /** Every change after a list, in order. */
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: WatchedObject): void;
}

/**
 * Runs the list+watch loop of one scope until `options.signal` aborts (see the file comment).
 * Never rejects.
 *
 * @public
 */
export async function runListWatch(options: ListWatchOptions): Promise<void> {
  const { backoff, logger, signal, resource, namespace } = options;
  const custom = options.kubeConfig.makeApiClient(options.lib.CustomObjectsApi);
  const watch = new options.lib.Watch(options.kubeConfig);
  const scope = namespace ? `namespace ${namespace}` : 'all namespaces';
  let resourceVersion: string | undefined;
  let startedAt: number | undefined;
  const onResourceVersion = (rv: string) => {
    resourceVersion = rv;
  };
  while (!signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        startedAt = undefined;
        resourceVersion = await list(options, custom);
      }
      startedAt = Date.now();
      const outcome = await watchFrom(options, watch, resourceVersion, onResourceVersion);
      if (outcome === 'expired') {
        logger.info(`${resource.kind} watch (${scope}): resourceVersion expired (410), re-listing`);
        resourceVersion = undefined;
      } else if (Date.now() - startedAt < QUICK_END_MS && !signal.aborted) {
        // 'ended' (server timeout or dropped connection): resume from the last resourceVersion,
        // but a watch that keeps ending at once must not spin.
        await sleep(backoff.nextDelayMs(), signal);
      } else {
        backoff.reset(); // a watch that ran for a while was healthy
      }
    } catch (error) {
      if (signal.aborted) break;
      if (startedAt !== undefined && Date.now() - startedAt >= QUICK_END_MS) backoff.reset();
      const delay = backoff.nextDelayMs();
      logger.warn(
        `${resource.kind} list/watch (${scope}) failed: ${describeKubernetesFailure(error)}; ` +
          `retrying in ${delay} ms`,
      );
      await sleep(delay, signal);
    }
  }
}

/** Lists the scope, hands the items over, and returns the list's resourceVersion. */
async function list(options: ListWatchOptions, custom: k8s.CustomObjectsApi): Promise<string> {
  const { resource, namespace, labelSelector } = options;
  const common = {
    group: resource.group,
    version: resource.version,
    plural: resource.plural,
    labelSelector,
  };
  const timeout = requestTimeoutOptions(options.lib, options.requestTimeoutMs);
  const result = (
    namespace
      ? await custom.listNamespacedCustomObject({ ...common, namespace }, timeout)
      : await custom.listClusterCustomObject(common, timeout)
  ) as {
    items: WatchedObject[];
    metadata?: { resourceVersion?: string };
  };
  if (options.signal.aborted) return '0';
  options.onList(result.items);
  return result.metadata?.resourceVersion ?? '0';
}

/**
 * One watch from `resourceVersion`. Resolves 'expired' on 410 Gone, 'ended' when the server
 * ends the watch cleanly (or the loop stops); rejects when the connection fails.
 */
function watchFrom(
  options: ListWatchOptions,
  watch: k8s.Watch,
  resourceVersion: string,
  onResourceVersion: (rv: string) => void,
): Promise<'expired' | 'ended'> {
  const { resource, namespace, signal, logger, backoff } = options;
  const path = namespace
    ? `/apis/${resource.group}/${resource.version}/namespaces/${namespace}/${resource.plural}`
    : `/apis/${resource.group}/${resource.version}/${resource.plural}`;
  const query: Record<string, string | number | boolean> = {
    resourceVersion,
    allowWatchBookmarks: true,
    timeoutSeconds: WATCH_TIMEOUT_SECONDS,
  };
  if (options.labelSelector) query.labelSelector = options.labelSelector;
  return new Promise((resolve, reject) => {
    let expired = false;
    let settled = false;
    // client-node hands out the watch's AbortController only once the response has started.
    let controller: AbortController | undefined;
    // Stopping, or a connection that stayed silent past the server-side timeout, ends the watch
    // at once, even while the request itself is still hanging.
    function onStop() {
      finish(null, 'ended');
    }
    signal.addEventListener('abort', onStop, { once: true });
    const silentConnection = setTimeout(onStop, WATCH_TIMEOUT_SECONDS * 1000 + WATCH_GRACE_MS);
    silentConnection.unref();
    function finish(error: unknown, outcome?: 'ended') {
      if (settled) return;
      settled = true;
      clearTimeout(silentConnection);
      signal.removeEventListener('abort', onStop);
      controller?.abort();
      if (expired) resolve('expired');
      else if (error && outcome === undefined && !signal.aborted) reject(error);
      else resolve('ended');
    }
    if (signal.aborted) onStop();
    watch
      .watch(
        path,
        query,
        (phase: string, object: any) => {
          if (settled) return;
          if (phase === 'ERROR') {
            if (object?.code === 410) expired = true;
            else logger.warn(`${resource.kind} watch error: ${object?.message ?? 'unknown'}`);
            return;
          }
          backoff.reset();
          const rv = object?.metadata?.resourceVersion;
          if (typeof rv === 'string') onResourceVersion(rv);
          if (phase === 'BOOKMARK') return;
          if (phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') {
            options.onEvent(phase, object);
          }
        },
        error => finish(error),
      )
      .then(
        c => {
          controller = c;
          if (settled) c.abort();
        },
        error => finish(error),
      );
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
