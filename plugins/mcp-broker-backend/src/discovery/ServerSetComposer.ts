/*
 * One server set from several sources (config entries, Kubernetes registrations), handed to the
 * broker complete on every change; the broker works out what was added, changed or removed.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
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
    const names = new Set(this.configServers.map(s => s.name));
    const result = [...this.configServers];
    for (const server of this.kubernetesServers) {
      if (names.has(server.name)) {
        if (!this.warned.has(server.name)) {
          this.warned.add(server.name);
          const from =
            server.source?.type === 'kubernetes'
              ? `${server.source.namespace}/${server.source.name}`
              : server.name;
          this.logger.warn(
            `MCPServerRegistration ${from} is not used: its server name "${server.name}" is taken (config entries win)`,
          );
        }
        continue;
      }
      names.add(server.name);
      result.push(server);
    }
    return result;
  }
}
