/*
 * Watches MCPServerRegistration resources with @kubernetes/client-node and keeps the broker's
 * Kubernetes-sourced server set current.
 *
 * Per scope (the cluster, or each configured namespace) one loop: list (remember the list's
 * resourceVersion) → watch from it (with bookmarks) → on a dropped or cleanly ended watch resume
 * from the last seen resourceVersion (no re-list, so no duplicate events) → on 410 Gone re-list
 * → on errors back off exponentially and try again, forever, until stopped. client-node's
 * informer stops after errors other than 410, hence this loop instead.
 *
 * Every registration is resolved (HTTPRoute → URL, Secret → Authorization) when it is added or
 * changes; `onServers` receives the complete set only when it differs from the last one, so a
 * re-list that finds nothing new changes nothing downstream. Secret values are never logged.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import { ExponentialBackoff } from '../upstream/backoff';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import {
  KubeObjectLike,
  RegistrationError,
  RegistrationLookups,
  resolveRegistration,
} from './registrationMapping';

const GROUP = 'mcp.kuadrant.io';
const VERSION = 'v1alpha1';
const PLURAL = 'mcpserverregistrations';
/** A watch that ends sooner than this counts as a failed attempt (backoff before the next). */
const QUICK_END_MS = 1000;
/**
 * Each watch asks the API server to end it after this long (`timeoutSeconds`), and is abandoned
 * by the broker WATCH_GRACE_MS later if it is still open: a connection that went silent (a
 * half-open socket after a network partition) cannot stall discovery for longer than that.
 */
const WATCH_TIMEOUT_SECONDS = 300;
const WATCH_GRACE_MS = 30_000;

/** Options of {@link RegistrationWatcher}. */
export interface RegistrationWatcherOptions {
  config: KubernetesDiscoveryConfig;
  kubeConfig: k8s.KubeConfig;
  /** The client-node module (loaded at plugin start, never at import time). */
  lib: typeof k8s;
  logger: LoggerService;
  /** Called with the whole Kubernetes-sourced server set whenever it changes. */
  onServers(servers: BrokerServerConfig[]): void;
}

interface Entry {
  /** The registration as last seen, and its resourceVersion. */
  registration: KubeObjectLike;
  resourceVersion: string | undefined;
  server: BrokerServerConfig | undefined;
  /** The last reason it could not be used (logged once per distinct reason). */
  problem?: string;
}

/** The list/watch loops for MCPServerRegistration resources. */
export class RegistrationWatcher {
  private readonly entries = new Map<string, Entry>();
  /** Bumped per key on every change, so a slow resolution never overwrites a newer one. */
  private readonly generations = new Map<string, number>();
  private readonly lifetime = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly custom: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly watch: k8s.Watch;
  private lastEmitted = '[]';
  /** While a re-list applies its result, changes are emitted once at its end. */
  private holdEmits = false;
  private resyncTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegistrationWatcherOptions) {
    this.custom = options.kubeConfig.makeApiClient(options.lib.CustomObjectsApi);
    this.core = options.kubeConfig.makeApiClient(options.lib.CoreV1Api);
    this.watch = new options.lib.Watch(options.kubeConfig);
  }

  /** Starts one loop per scope. */
  start(): void {
    const scopes = this.options.config.namespaces ?? [undefined];
    for (const namespace of scopes) this.loops.push(this.run(namespace));
    // HTTPRoutes and Secrets are read, not watched: re-resolve every registration now and then,
    // so a rotated credential, a moved route or a route created after its registration is used.
    this.resyncTimer = setInterval(() => this.resolveAll(), this.options.config.resyncIntervalMs);
    this.resyncTimer.unref();
  }

  /** Stops watching (the current server set stays with the broker). */
  async stop(): Promise<void> {
    this.lifetime.abort();
    clearInterval(this.resyncTimer);
    await Promise.all(this.loops);
  }

  private async run(namespace: string | undefined): Promise<void> {
    const { backoff: settings } = this.options.config;
    const backoff = new ExponentialBackoff(settings.initialDelayMs, settings.maxDelayMs);
    const scope = namespace ? `namespace ${namespace}` : 'all namespaces';
    let resourceVersion: string | undefined;
    let startedAt: number | undefined;
    const signal = this.lifetime.signal;
    const onResourceVersion = (rv: string) => {
      resourceVersion = rv;
    };
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          startedAt = undefined;
          resourceVersion = await this.relist(namespace);
        }
        startedAt = Date.now();
        const outcome = await this.watchFrom(
          namespace,
          resourceVersion,
          () => backoff.reset(),
          onResourceVersion,
        );
        if (outcome === 'expired') {
          this.options.logger.info(`MCPServerRegistration watch (${scope}): resourceVersion expired (410), re-listing`);
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
        this.options.logger.warn(
          `MCPServerRegistration list/watch (${scope}) failed: ${describe(error)}; retrying in ${delay} ms`,
        );
        await sleep(delay, signal);
      }
    }
  }

  /** Lists the scope, replaces its entries, and returns the list's resourceVersion. */
  private async relist(namespace: string | undefined): Promise<string> {
    const { labelSelector } = this.options.config;
    const common = { group: GROUP, version: VERSION, plural: PLURAL, labelSelector };
    const list = (namespace
      ? await this.custom.listNamespacedCustomObject({ ...common, namespace }, this.timeout())
      : await this.custom.listClusterCustomObject(common, this.timeout())) as {
      items: KubeObjectLike[];
      metadata?: { resourceVersion?: string };
    };
    const seen = new Set<string>();
    this.holdEmits = true;
    try {
      for (const item of list.items) {
        const key = keyOf(item);
        seen.add(key);
        this.upsert(key, item);
      }
      for (const key of [...this.entries.keys()]) {
        if (!seen.has(key) && (namespace === undefined || key.startsWith(`${namespace}/`))) this.remove(key);
      }
    } finally {
      this.holdEmits = false;
    }
    this.emit();
    return list.metadata?.resourceVersion ?? '0';
  }

  /**
   * One watch from `resourceVersion`. Resolves 'expired' on 410 Gone, 'ended' when the server
   * ends the watch cleanly; rejects when the connection fails.
   */
  private watchFrom(
    namespace: string | undefined,
    resourceVersion: string,
    onHealthy: () => void,
    onResourceVersion: (rv: string) => void,
  ): Promise<'expired' | 'ended'> {
    const path = namespace
      ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}`
      : `/apis/${GROUP}/${VERSION}/${PLURAL}`;
    const query: Record<string, string | number | boolean> = {
      resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS,
    };
    if (this.options.config.labelSelector) query.labelSelector = this.options.config.labelSelector;
    return new Promise((resolve, reject) => {
      let expired = false;
      let settled = false;
      // client-node hands out the watch's AbortController only once the response has started.
      let controller: AbortController | undefined;
      const lifetimeSignal = this.lifetime.signal;
      // Stopping, or a connection that stayed silent past the server-side timeout, ends the watch
      // at once, even while the request itself is still hanging.
      function onStop() {
        finish(null, 'ended');
      }
      this.lifetime.signal.addEventListener('abort', onStop, { once: true });
      const silentConnection = setTimeout(onStop, WATCH_TIMEOUT_SECONDS * 1000 + WATCH_GRACE_MS);
      silentConnection.unref();
      function finish(error: unknown, outcome?: 'ended') {
        if (settled) return;
        settled = true;
        clearTimeout(silentConnection);
        lifetimeSignal.removeEventListener('abort', onStop);
        controller?.abort();
        if (expired) resolve('expired');
        else if (error && outcome === undefined && !lifetimeSignal.aborted) reject(error);
        else resolve('ended');
      }
      if (this.lifetime.signal.aborted) onStop();
      this.watch
        .watch(
          path,
          query,
          (phase: string, object: any) => {
            if (settled) return;
            if (phase === 'ERROR') {
              if (object?.code === 410) expired = true;
              else this.options.logger.warn(`MCPServerRegistration watch error: ${object?.message ?? 'unknown'}`);
              return;
            }
            onHealthy();
            const rv = object?.metadata?.resourceVersion;
            if (typeof rv === 'string') onResourceVersion(rv);
            if (phase === 'BOOKMARK') return;
            const key = keyOf(object);
            if (phase === 'DELETED') this.remove(key);
            else this.upsert(key, object);
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

  private upsert(key: string, registration: KubeObjectLike) {
    const rv = registration.metadata?.resourceVersion;
    const current = this.entries.get(key);
    // The same version again (a re-list, a replayed event): nothing to do.
    if (current && rv !== undefined && current.resourceVersion === rv) return;
    this.entries.set(key, { registration, resourceVersion: rv, server: current?.server });
    this.resolve(key, registration);
  }

  /** Re-resolves every registration (their HTTPRoutes and Secrets may have changed). */
  private resolveAll() {
    for (const [key, entry] of this.entries) this.resolve(key, entry.registration);
  }

  private resolve(key: string, registration: KubeObjectLike) {
    const generation = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, generation);
    void resolveRegistration(registration, this.lookups, this.options.config.routes).then(
      server => this.resolved(key, generation, server, undefined),
      error => {
        if (error instanceof RegistrationError) {
          this.resolved(key, generation, undefined, error.message);
        } else {
          // The API server failed (not the registration): keep what works, retry at the next resync.
          const entry = this.entries.get(key);
          this.resolved(key, generation, entry?.server, `could not read its HTTPRoute or Secret: ${describe(error)}`);
        }
      },
    );
  }

  private resolved(key: string, generation: number, server: BrokerServerConfig | undefined, problem: string | undefined) {
    const entry = this.entries.get(key);
    if (this.generations.get(key) !== generation || !entry) return;
    if (problem !== undefined && problem !== entry.problem) {
      this.options.logger.warn(`MCPServerRegistration ${key}${entry.server && server ? ' (kept as it was)' : ' is not used'}: ${problem}`);
    }
    entry.problem = problem;
    entry.server = server;
    this.emit();
  }

  private remove(key: string) {
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
    if (this.entries.delete(key)) this.emit();
  }

  private emit() {
    if (this.holdEmits) return;
    const servers = [...this.entries.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([, entry]) => (entry.server ? [entry.server] : []));
    const serialized = JSON.stringify(servers);
    if (serialized === this.lastEmitted) return;
    this.lastEmitted = serialized;
    this.options.onServers(servers);
  }

  private readonly lookups: RegistrationLookups = {
    httpRoute: (namespace, name) =>
      this.readOrUndefined(() =>
        this.custom.getNamespacedCustomObject(
          { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', namespace, name },
          this.timeout(),
        ),
      ),
    secret: (namespace, name) =>
      this.readOrUndefined(() => this.core.readNamespacedSecret({ namespace, name }, this.timeout())),
  };

  private async readOrUndefined(read: () => Promise<unknown>): Promise<KubeObjectLike | undefined> {
    try {
      return (await read()) as KubeObjectLike;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  }

  /** Per-call options: client-node sets no timeout, so each request gets its own signal. */
  private timeout(): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
    const { lib } = this.options;
    const ms = this.options.config.requestTimeoutMs;
    return {
      middleware: [
        {
          pre: ctx => {
            ctx.setSignal(AbortSignal.timeout(ms));
            return new lib.Observable(Promise.resolve(ctx));
          },
          post: res => new lib.Observable(Promise.resolve(res)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
  }
}

function keyOf(object: KubeObjectLike): string {
  return `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;
}

/** An error for logs: HTTP status and reason for API errors, never a response body with data. */
function describe(error: unknown): string {
  const e = error as { code?: number; message?: string; body?: unknown };
  if (typeof e?.code === 'number') {
    let reason = '';
    try {
      reason = typeof e.body === 'string' ? ` ${JSON.parse(e.body).reason ?? ''}` : '';
    } catch {
      // not a Status body
    }
    return `HTTP ${e.code}${reason}`;
  }
  return e?.message ?? String(error);
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
