/*
 * Watches MCPServerRegistration resources with @kubernetes/client-node and keeps the broker's
 * Kubernetes-sourced server set current.
 *
 * Per scope (the cluster, or each configured namespace) one list+watch loop
 * (scopedListWatch.ts: resume after a dropped watch, re-list on 410 Gone, exponential backoff on
 * errors, forever, until stopped).
 *
 * Every registration is resolved (HTTPRoute → URL, Secret → Authorization, credential profile →
 * auth) when it is added or changes; `onServers` receives the complete set only when it differs
 * from the last one, so a re-list that finds nothing new changes nothing downstream. A refused
 * registration (spec §11.1) serves nothing; its reason is logged once per change (not per
 * resync), listed by `refused()` for `/status`, and written to its `Accepted` condition
 * (AcceptedConditions). Secret values are never logged.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  describeKubernetesFailure,
  kubernetesApiStatusOf,
  requestTimeoutOptions,
} from '@devportal/backend-kubernetes-client';
import type * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import type { CredentialProfile } from '../identity/credentialProfiles';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import { ChangedSetEmitter, sortedValues } from './ChangedSetEmitter';
import { AcceptedConditions, type AcceptedVerdict } from './AcceptedConditions';
import { resolveRegistration } from './registrationMapping';
import {
  changesMoreThanStatus,
  startScopedListWatches,
  type ScopedListWatch,
  type WatchedResource,
} from './scopedListWatch';
import {
  RegistrationError,
  type KubeObjectLike,
  type RefusalReason,
  type RegistrationLookups,
} from './registrationTypes';

const REGISTRATIONS: WatchedResource = {
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
  /** The admin's credential profiles (`mcpBroker.credentialProfiles`). */
  profiles: ReadonlyMap<string, CredentialProfile>;
  /** Backstage's base URLs of a plugin (discovery service), for `backstage` profiles. */
  pluginBaseUrls(pluginId: string): Promise<readonly string[]>;
  /** Called with the whole Kubernetes-sourced server set whenever it changes. */
  onServers(servers: BrokerServerConfig[]): void;
}

/** A registration that serves nothing, and why (for `/status`; never a secret). */
export interface RefusedRegistration {
  kind: 'MCPServerRegistration';
  namespace: string;
  name: string;
  /** A RefusalReason, or `ClusterReadFailed` when its HTTPRoute or Secret could not be read. */
  reason: RefusalReason | 'ClusterReadFailed';
  message: string;
}

interface Entry {
  /** The registration as last seen, and its resourceVersion. */
  registration: KubeObjectLike;
  resourceVersion: string | undefined;
  server: BrokerServerConfig | undefined;
  /** The last reason it could not be used (logged once per distinct reason). */
  problem?: string;
  reason?: RefusedRegistration['reason'];
  /** The last decision (undefined until the first resolution, or after a failed cluster read). */
  verdict?: AcceptedVerdict<RefusalReason>;
}

/** The list/watch loops for MCPServerRegistration resources. */
export class RegistrationWatcher {
  private readonly entries = new Map<string, Entry>();
  /** Bumped per key on every change, so a slow resolution never overwrites a newer one. */
  private readonly generations = new Map<string, number>();
  /** Keys whose latest resolution has not settled yet. */
  private readonly resolving = new Set<string>();
  private watch: ScopedListWatch | undefined;
  private readonly custom: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly conditions: AcceptedConditions;
  private readonly emitter = new ChangedSetEmitter(
    () => sortedValues(this.entries, entry => entry.server),
    servers => this.options.onServers(servers),
  );
  private profiles: ReadonlyMap<string, CredentialProfile>;
  private resyncTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegistrationWatcherOptions) {
    this.custom = options.kubeConfig.makeApiClient(options.lib.CustomObjectsApi);
    this.core = options.kubeConfig.makeApiClient(options.lib.CoreV1Api);
    this.profiles = options.profiles;
    this.conditions = new AcceptedConditions({
      custom: this.custom,
      lib: options.lib,
      resource: REGISTRATIONS,
      requestTimeoutMs: options.config.requestTimeoutMs,
      logger: options.logger,
    });
  }

  /** Uses changed credential profiles (a config reload): every registration is decided again. */
  setProfiles(profiles: ReadonlyMap<string, CredentialProfile>): void {
    this.profiles = profiles;
    this.resolveAll();
  }

  /** The registrations that serve nothing, by namespace and name. */
  refused(): RefusedRegistration[] {
    return [...this.entries.entries()]
      .filter(([, entry]) => entry.server === undefined && entry.reason !== undefined)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, entry]) => ({
        kind: 'MCPServerRegistration' as const,
        namespace: entry.registration.metadata?.namespace ?? '',
        name: entry.registration.metadata?.name ?? '',
        reason: entry.reason!,
        message: entry.problem!,
      }));
  }

  /** Starts one loop per scope. */
  start(): void {
    const { config, lib, kubeConfig, logger } = this.options;
    this.watch = startScopedListWatches({
      config,
      lib,
      kubeConfig,
      logger,
      resource: REGISTRATIONS,
      sink: {
        keys: () => this.entries.keys(),
        upsert: (key, object) => this.upsert(key, object),
        remove: key => this.remove(key),
        batch: apply => this.emitter.batch(apply),
      },
    });
    // HTTPRoutes and Secrets are read, not watched: re-resolve every registration now and then,
    // so a rotated credential, a moved route or a route created after its registration is used.
    this.resyncTimer = setInterval(() => this.resolveAll(), this.options.config.resyncIntervalMs);
    this.resyncTimer.unref();
  }

  /** Stops watching (the current server set stays with the broker). */
  async stop(): Promise<void> {
    clearInterval(this.resyncTimer);
    await this.watch?.stop();
  }

  private upsert(key: string, registration: KubeObjectLike) {
    const rv = registration.metadata?.resourceVersion;
    const current = this.entries.get(key);
    // The same version again (a re-list, a replayed event): nothing to do.
    if (current && rv !== undefined && current.resourceVersion === rv) return;
    if (current && !changesMoreThanStatus(current.registration, registration)) {
      // Only its status changed (our own condition write, or another controller's).
      current.registration = registration;
      current.resourceVersion = rv;
      if (current.verdict) this.conditions.sync(registration, current.verdict);
      return;
    }
    this.entries.set(key, {
      ...current,
      registration,
      resourceVersion: rv,
      server: current?.server,
    });
    this.resolve(key, registration);
  }

  /**
   * Re-resolves every registration (their HTTPRoutes and Secrets may have changed), except those
   * still being resolved: on a slow API server a resync must not supersede a resolution it would
   * start again anyway, or a registration slower to read than the interval would never serve.
   */
  private resolveAll() {
    for (const [key, entry] of this.entries) {
      if (!this.resolving.has(key)) this.resolve(key, entry.registration);
    }
  }

  private resolve(key: string, registration: KubeObjectLike) {
    const generation = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, generation);
    this.resolving.add(key);
    const context = {
      lookups: this.lookups,
      routes: this.options.config.routes,
      profiles: this.profiles,
      pluginBaseUrls: this.options.pluginBaseUrls,
    };
    void resolveRegistration(registration, context).then(
      server => this.resolved(key, generation, server, undefined),
      error => {
        if (error instanceof RegistrationError) {
          this.resolved(key, generation, undefined, error);
        } else {
          // The API server failed (not the registration): keep what works, retry at the next resync.
          const entry = this.entries.get(key);
          const problem = `could not read its HTTPRoute or Secret: ${describeKubernetesFailure(error)}`;
          this.resolved(key, generation, entry?.server, { message: problem });
        }
      },
    );
  }

  private resolved(
    key: string,
    generation: number,
    server: BrokerServerConfig | undefined,
    problem: { message: string; reason?: RefusalReason } | undefined,
  ) {
    if (this.generations.get(key) !== generation) return;
    this.resolving.delete(key);
    const entry = this.entries.get(key);
    if (!entry) return;
    if (problem !== undefined && problem.message !== entry.problem) {
      this.options.logger.warn(
        `MCPServerRegistration ${key}${entry.server && server ? ' (kept as it was)' : ' is not used'}: ${problem.message}`,
      );
    }
    entry.problem = problem?.message;
    entry.reason = problem === undefined ? undefined : (problem.reason ?? 'ClusterReadFailed');
    entry.server = server;
    if (problem === undefined || problem.reason !== undefined) {
      entry.verdict = problem?.reason
        ? { accepted: false, reason: problem.reason, message: problem.message }
        : { accepted: true, message: acceptedMessage(server!) };
      this.conditions.sync(entry.registration, entry.verdict);
    }
    this.emitter.emit();
  }

  private remove(key: string) {
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
    this.resolving.delete(key);
    this.conditions.forget(key);
    if (this.entries.delete(key)) this.emitter.emit();
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

function acceptedMessage(server: BrokerServerConfig): string {
  const profile =
    server.source?.type === 'kubernetes' ? server.source.credentialProfile : undefined;
  return `Served as ${server.name} (${server.url}), ${
    profile === undefined
      ? "with the broker's own credentials"
      : `with credential profile "${profile}" (${server.auth?.mode})`
  }`;
}
