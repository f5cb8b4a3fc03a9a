/*
 * Watches MCPVirtualServer resources (mcp.kuadrant.io/v1alpha1) and keeps the broker's
 * Kubernetes-sourced curated endpoints current (docs/contracts/curated-endpoints.md §9).
 *
 * The same list+watch loops and settings as registrations (scopedListWatch.ts). Each virtual
 * server is decided (virtualServerMapping.ts) when it is added or changes, and all of them again
 * whenever the broker's server set changes (`setServers`), since whether a tool belongs to the
 * resource's namespace depends on which servers exist. `onEndpoints` receives the complete set
 * only when it differs from the last one. A refused virtual server serves nothing; its reason is
 * logged once per change, listed by `refused()` for `/status` and written to its `Accepted`
 * condition (AcceptedConditions).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import type { CuratedEndpointConfig } from '../endpoints/endpointConfig';
import { ChangedSetEmitter, sortedValues } from './ChangedSetEmitter';
import { AcceptedConditions, type AcceptedVerdict } from './AcceptedConditions';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import type { KubeObjectLike } from './registrationTypes';
import {
  changesMoreThanStatus,
  startScopedListWatches,
  type ScopedListWatch,
  type WatchedResource,
} from './scopedListWatch';
import {
  endpointOfVirtualServer,
  VirtualServerError,
  type VirtualServerRefusalReason,
} from './virtualServerMapping';

const VIRTUAL_SERVERS: WatchedResource = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  plural: 'mcpvirtualservers',
  kind: 'MCPVirtualServer',
};

/** Options of {@link VirtualServerWatcher}. */
export interface VirtualServerWatcherOptions {
  config: KubernetesDiscoveryConfig;
  kubeConfig: k8s.KubeConfig;
  /** The client-node module (loaded at plugin start, never at import time). */
  lib: typeof k8s;
  logger: LoggerService;
  /** Called with the whole Kubernetes-sourced endpoint set whenever it changes. */
  onEndpoints(endpoints: CuratedEndpointConfig[]): void;
}

/** A virtual server that serves nothing, and why (for `/status`). */
export interface RefusedVirtualServer {
  kind: 'MCPVirtualServer';
  namespace: string;
  name: string;
  reason: VirtualServerRefusalReason;
  message: string;
}

interface Entry {
  object: KubeObjectLike;
  endpoint?: CuratedEndpointConfig;
  verdict?: AcceptedVerdict<VirtualServerRefusalReason>;
}

/** The list/watch loops for MCPVirtualServer resources; see the file comment. */
export class VirtualServerWatcher {
  private readonly entries = new Map<string, Entry>();
  private watch: ScopedListWatch | undefined;
  private readonly conditions: AcceptedConditions;
  private readonly emitter = new ChangedSetEmitter(
    () => sortedValues(this.entries, entry => entry.endpoint),
    endpoints => this.options.onEndpoints(endpoints),
  );
  private servers: readonly BrokerServerConfig[] = [];

  constructor(private readonly options: VirtualServerWatcherOptions) {
    this.conditions = new AcceptedConditions({
      custom: options.kubeConfig.makeApiClient(options.lib.CustomObjectsApi),
      lib: options.lib,
      resource: VIRTUAL_SERVERS,
      requestTimeoutMs: options.config.requestTimeoutMs,
      logger: options.logger,
    });
  }

  /** Decides every virtual server again against the broker's (changed) server set. */
  setServers(servers: readonly BrokerServerConfig[]): void {
    this.servers = servers;
    this.emitter.batch(() => {
      for (const key of this.entries.keys()) this.decide(key);
    });
  }

  /** The virtual servers that serve nothing, by namespace and name. */
  refused(): RefusedVirtualServer[] {
    return sortedValues(this.entries, ({ object, verdict }) =>
      verdict === undefined || verdict.accepted
        ? undefined
        : {
            kind: 'MCPVirtualServer' as const,
            namespace: object.metadata?.namespace ?? '',
            name: object.metadata?.name ?? '',
            reason: verdict.reason,
            message: verdict.message,
          },
    );
  }

  /** Starts one loop per scope. */
  start(): void {
    const { config, lib, kubeConfig, logger } = this.options;
    this.watch = startScopedListWatches({
      config,
      lib,
      kubeConfig,
      logger,
      resource: VIRTUAL_SERVERS,
      sink: {
        keys: () => this.entries.keys(),
        upsert: (key, object) => this.upsert(key, object),
        remove: key => this.remove(key),
        batch: apply => this.emitter.batch(apply),
      },
    });
  }

  /** Stops watching (the current endpoints stay with the broker). */
  async stop(): Promise<void> {
    await this.watch?.stop();
  }

  private upsert(key: string, object: KubeObjectLike) {
    const entry = this.entries.get(key);
    if (entry !== undefined && !changesMoreThanStatus(entry.object, object)) {
      // Only its status changed (our own condition write, or another controller's).
      entry.object = object;
      if (entry.verdict) this.conditions.sync(object, entry.verdict);
      return;
    }
    this.entries.set(key, { ...entry, object });
    this.decide(key);
    this.emitter.emit();
  }

  private decide(key: string) {
    const entry = this.entries.get(key)!;
    let verdict: AcceptedVerdict<VirtualServerRefusalReason>;
    try {
      entry.endpoint = endpointOfVirtualServer(entry.object, this.servers);
      verdict = {
        accepted: true,
        message: `Served at /api/mcp-broker/endpoints/${entry.endpoint.name}/mcp with ${
          entry.endpoint.includeNames!.length
        } tool name(s) of server(s) ${entry.endpoint.servers.join(', ')}`,
      };
    } catch (error) {
      if (!(error instanceof VirtualServerError)) throw error;
      entry.endpoint = undefined;
      verdict = { accepted: false, reason: error.reason, message: error.message };
    }
    if (!verdict.accepted && verdict.message !== entry.verdict?.message) {
      this.options.logger.warn(`MCPVirtualServer ${key} is not used: ${verdict.message}`);
    }
    entry.verdict = verdict;
    this.conditions.sync(entry.object, verdict);
  }

  private remove(key: string) {
    this.conditions.forget(key);
    if (this.entries.delete(key)) this.emitter.emit();
  }
}
