/*
 * Config reload of curated endpoints (spec §13, docs/contracts/curated-endpoints.md §6): when the
 * root config changes, `mcpBroker.endpoints` is read again and handed to the endpoint set, which
 * serves it beside the Kubernetes endpoints (EndpointSetComposer, applyEndpointConfigs.ts). An
 * invalid entry refuses the whole reload (logged with the key, as at start-up); the running
 * endpoints stay.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';
import { type CuratedEndpointConfig, readCuratedEndpoints } from './endpointConfig';

/** Options of {@link watchEndpointConfig}. */
export interface EndpointConfigWatchOptions {
  /** The root config; without `subscribe` (a static config) nothing is watched. */
  config: Config;
  logger: LoggerService;
  /** Where the reloaded `mcpBroker.endpoints` go (an EndpointSetComposer). */
  endpoints: { setConfigEndpoints(configs: readonly CuratedEndpointConfig[]): void };
}

/** Hands every config change's `mcpBroker.endpoints` on; `stop` ends the subscription. */
export function watchEndpointConfig(options: EndpointConfigWatchOptions): { stop(): void } {
  const { config, logger } = options;
  const subscription = config.subscribe?.(() => {
    let configs: CuratedEndpointConfig[];
    try {
      configs = readCuratedEndpoints(config);
    } catch (error) {
      logger.error(
        `Ignored the reloaded mcpBroker.endpoints; the running endpoints stay: ${
          (error as Error).message
        }`,
      );
      return;
    }
    options.endpoints.setConfigEndpoints(configs);
  });
  return { stop: () => subscription?.unsubscribe() };
}
