/*
 * One server set from several sources (config entries, Kubernetes registrations), handed to the
 * broker complete on every change; the broker works out what was added, changed or removed.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { composeConfigFirst } from '../composeConfigFirst';
import type { BrokerServerConfig } from '../config';

/**
 * The broker's server set from its sources: config entries first (in config order), then
 * Kubernetes registrations. A registration whose derived name equals a config entry's is left
 * out with a warning: config wins, nothing is silently replaced.
 */
export class ServerSetComposer {
  private configServers: readonly BrokerServerConfig[] = [];
  private kubernetesServers: readonly BrokerServerConfig[] = [];
  private readonly warned = new Set<string>();

  constructor(
    private readonly apply: (servers: BrokerServerConfig[]) => void,
    private readonly logger: LoggerService,
  ) {}

  setConfigServers(servers: readonly BrokerServerConfig[]): void {
    this.configServers = servers;
    this.apply(this.compose());
  }

  setKubernetesServers(servers: readonly BrokerServerConfig[]): void {
    this.kubernetesServers = servers;
    this.apply(this.compose());
  }

  /** The combined list (also what the broker starts with). */
  compose(): BrokerServerConfig[] {
    return composeConfigFirst(this.configServers, this.kubernetesServers, this.warned, server => {
      const from =
        server.source?.type === 'kubernetes'
          ? `${server.source.namespace}/${server.source.name}`
          : server.name;
      this.logger.warn(
        `MCPServerRegistration ${from} is not used: its server name "${server.name}" is taken (config entries win)`,
      );
    });
  }
}
