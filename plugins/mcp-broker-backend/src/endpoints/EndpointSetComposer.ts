/*
 * One curated endpoint set from its two sources (docs/contracts/curated-endpoints.md §9):
 * `mcpBroker.endpoints` (config, written by admins) and MCPVirtualServers (Kubernetes, written by
 * namespaces' owners), served through applyEndpointConfigs on every change of either — so an
 * added, changed or removed Kubernetes endpoint gets the same list_changed and session endings
 * as a config one, and a config reload keeps the Kubernetes endpoints. As for servers
 * (ServerSetComposer), a Kubernetes endpoint whose name a config endpoint has is left out with
 * one warning: config wins, nothing is silently replaced.
 */
import { composeConfigFirst } from '../composeConfigFirst';
import { applyEndpointConfigs, type ApplyEndpointConfigsOptions } from './applyEndpointConfigs';
import type { CuratedEndpointConfig } from './endpointConfig';

/** Options of {@link EndpointSetComposer}. */
export interface EndpointSetComposerOptions extends ApplyEndpointConfigsOptions {
  /** The config endpoints served at start (what `endpoints` was made from). */
  configEndpoints: readonly CuratedEndpointConfig[];
}

/** The broker's endpoint set from config and Kubernetes; see the file comment. */
export class EndpointSetComposer {
  private configEndpoints: readonly CuratedEndpointConfig[];
  private kubernetesEndpoints: readonly CuratedEndpointConfig[] = [];
  private readonly warned = new Set<string>();

  constructor(private readonly options: EndpointSetComposerOptions) {
    this.configEndpoints = options.configEndpoints;
  }

  /** Serves `configs` as the config endpoints from now on (a config reload). */
  setConfigEndpoints(configs: readonly CuratedEndpointConfig[]): void {
    this.configEndpoints = configs;
    this.apply();
  }

  /** Serves `configs` as the Kubernetes endpoints from now on (the virtual servers changed). */
  setKubernetesEndpoints(configs: readonly CuratedEndpointConfig[]): void {
    this.kubernetesEndpoints = configs;
    this.apply();
  }

  /** The combined set: config endpoints first, then Kubernetes ones with a free name. */
  compose(): CuratedEndpointConfig[] {
    return composeConfigFirst(
      this.configEndpoints,
      this.kubernetesEndpoints,
      this.warned,
      endpoint =>
        this.options.logger.warn(
          `MCPVirtualServer endpoint "${endpoint.name}" is not used: a config endpoint has its name (config endpoints win)`,
        ),
    );
  }

  private apply() {
    applyEndpointConfigs(this.compose(), this.options).catch(error =>
      this.options.logger.warn(`MCP broker: applying the curated endpoints failed: ${error}`),
    );
  }
}
