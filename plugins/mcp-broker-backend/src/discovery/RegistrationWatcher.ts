/*
 * Watches MCPServerRegistration resources with @kubernetes/client-node and keeps the broker's
 * Kubernetes-sourced server set current.
 *
 * Per scope (the cluster, or each configured namespace) one list+watch loop of the shared
 * `runListWatch` (@devportal/backend-kubernetes-client: resume after a dropped watch, re-list on
 * 410 Gone, exponential backoff on errors, forever, until stopped).
 *
 * Every registration is resolved (HTTPRoute → URL, Secret → Authorization) when it is added or
 * changes; `onServers` receives the complete set only when it differs from the last one, so a
 * re-list that finds nothing new changes nothing downstream. Secret values are never logged.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  describeKubernetesFailure,
  kubernetesApiStatusOf,
  requestTimeoutOptions,
  runListWatch,
} from '@devportal/backend-kubernetes-client';
import type * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import { ExponentialBackoff } from '../backend/ExponentialBackoff';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import {
  KubeObjectLike,
  RegistrationError,
  RegistrationLookups,
  resolveRegistration,
} from './registrationMapping';

const REGISTRATIONS = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  plural: 'mcpserverregistrations',
  kind: 'MCPServerRegistration',
};

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
  private lastEmitted = '[]';
  /** While a re-list applies its result, changes are emitted once at its end. */
  private holdEmits = false;
  private resyncTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegistrationWatcherOptions) {
    this.custom = options.kubeConfig.makeApiClient(options.lib.CustomObjectsApi);
    this.core = options.kubeConfig.makeApiClient(options.lib.CoreV1Api);
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

  private run(namespace: string | undefined): Promise<void> {
    const { config, lib, kubeConfig, logger } = this.options;
    return runListWatch({
      lib,
      kubeConfig,
      resource: REGISTRATIONS,
      namespace,
      labelSelector: config.labelSelector,
      requestTimeoutMs: config.requestTimeoutMs,
      backoff: new ExponentialBackoff(config.backoff.initialDelayMs, config.backoff.maxDelayMs),
      logger,
      signal: this.lifetime.signal,
      onList: items => this.replaceScope(namespace, items as KubeObjectLike[]),
      onEvent: (type, object) => {
        const key = keyOf(object as KubeObjectLike);
        if (type === 'DELETED') this.remove(key);
        else this.upsert(key, object as KubeObjectLike);
      },
    });
  }

  /** Replaces the entries of a scope with a complete list of it (emitting once, at the end). */
  private replaceScope(namespace: string | undefined, items: KubeObjectLike[]) {
    const seen = new Set<string>();
    this.holdEmits = true;
    try {
      for (const item of items) {
        const key = keyOf(item);
        seen.add(key);
        this.upsert(key, item);
      }
      for (const key of [...this.entries.keys()]) {
        if (!seen.has(key) && (namespace === undefined || key.startsWith(`${namespace}/`)))
          this.remove(key);
      }
    } finally {
      this.holdEmits = false;
    }
    this.emit();
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
          const problem = `could not read its HTTPRoute or Secret: ${describeKubernetesFailure(error)}`;
          this.resolved(key, generation, entry?.server, problem);
        }
      },
    );
  }

  private resolved(
    key: string,
    generation: number,
    server: BrokerServerConfig | undefined,
    problem: string | undefined,
  ) {
    const entry = this.entries.get(key);
    if (this.generations.get(key) !== generation || !entry) return;
    if (problem !== undefined && problem !== entry.problem) {
      this.options.logger.warn(
        `MCPServerRegistration ${key}${entry.server && server ? ' (kept as it was)' : ' is not used'}: ${problem}`,
      );
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
          {
            group: 'gateway.networking.k8s.io',
            version: 'v1',
            plural: 'httproutes',
            namespace,
            name,
          },
          this.timeout(),
        ),
      ),
    secret: (namespace, name) =>
      this.readOrUndefined(() =>
        this.core.readNamespacedSecret({ namespace, name }, this.timeout()),
      ),
  };

  private async readOrUndefined(read: () => Promise<unknown>): Promise<KubeObjectLike | undefined> {
    try {
      return (await read()) as KubeObjectLike;
    } catch (error) {
      if (kubernetesApiStatusOf(error)?.code === 404) return undefined;
      throw error;
    }
  }

  /** Per-call options: client-node sets no timeout, so each request gets its own signal. */
  private timeout() {
    return requestTimeoutOptions(this.options.lib, this.options.config.requestTimeoutMs);
  }
}

function keyOf(object: KubeObjectLike): string {
  return `${object?.metadata?.namespace ?? ''}/${object?.metadata?.name ?? ''}`;
}
