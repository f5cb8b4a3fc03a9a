/*
 * Serving a new set of curated endpoints (spec §13, docs/contracts/curated-endpoints.md §6 and
 * §9): the set composed of `mcpBroker.endpoints` and the Kubernetes MCPVirtualServers, whenever
 * either changes.
 *
 * - A changed endpoint: its clients (GET streams and `subscriptions/listen` streams opened on it)
 *   get `list_changed` of each kind whose selection of the current catalog changed (globs,
 *   annotation filters, servers, overrides). The selection is compared before anyone's
 *   permissions, so a client whose policy hides every changed item may hear of a change it
 *   cannot see (a hint to list again, never a leak: the list it gets is its own view).
 * - A removed endpoint: new requests to its path are 404 at once (the router looks endpoints up
 *   per request); its listen streams end with their `complete` result; each of its legacy
 *   sessions on this replica loses its GET stream at once and ends (record, backend sessions,
 *   elicitation ids) once the requests it is running have finished, so calls in flight finish.
 *   Requests already admitted keep the endpoint they were admitted with.
 *
 * Every replica reads its own config and watches the cluster, so each ends the sessions it holds; a session of a
 * removed endpoint held nowhere is refused by its path (404) and expires with its TTL.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { ViewKind } from '../broker/AggregatedCatalog';
import type { McpBroker } from '../broker/McpBroker';
import type { CuratedEndpoints } from './CuratedEndpoints';
import { parseViewer } from './EndpointListViews';
import type { CuratedEndpointConfig } from './endpointConfig';

/** What serving a new endpoint set needs of the broker. */
export type EndpointReloadBroker = Pick<
  McpBroker,
  'catalog' | 'announceViewChanges' | 'listenStreams' | 'sessions' | 'endSession'
>;

/** Options of {@link applyEndpointConfigs}. */
export interface ApplyEndpointConfigsOptions {
  logger: LoggerService;
  endpoints: CuratedEndpoints;
  broker: EndpointReloadBroker;
}

const VIEW_KINDS: readonly ViewKind[] = ['tools', 'prompts', 'resources'];

/**
 * Serves `configs` from now on (see the file comment). Resolves when the sessions of removed
 * endpoints have ended (after their calls in flight).
 */
export async function applyEndpointConfigs(
  configs: readonly CuratedEndpointConfig[],
  options: ApplyEndpointConfigsOptions,
): Promise<void> {
  const { endpoints, broker, logger } = options;
  const { removed, changed } = endpoints.replace(configs);
  const catalog = broker.catalog();
  for (const { previous, next } of changed) {
    logger.info(`MCP broker: curated endpoint ${next.name} ${previous ? 'changed' : 'added'}`);
    // A new endpoint has no clients yet.
    if (previous === undefined) continue;
    const kinds = VIEW_KINDS.filter(
      kind =>
        previous.selectionOf(catalog).fingerprint(kind) !==
        next.selectionOf(catalog).fingerprint(kind),
    );
    if (kinds.length > 0) broker.announceViewChanges(onEndpoint(next.name), kinds);
  }
  await Promise.all(removed.map(name => retire(name, options)));
}

/** Ends what a removed endpoint's clients hold on this replica; see the file comment. */
async function retire(
  name: string,
  { broker, logger }: Omit<ApplyEndpointConfigsOptions, 'endpoints'>,
): Promise<void> {
  const sessions = broker.sessions.idsOfEndpoint(name);
  logger.info(
    `MCP broker: curated endpoint ${name} removed; ending its listen streams and ` +
      `${sessions.length} session(s) here once their calls in flight finish`,
  );
  broker.listenStreams.closeWhere(onEndpoint(name));
  await Promise.all(
    sessions.map(async id => {
      broker.sessions.localEventStream(id)?.close();
      await broker.sessions.whenIdle(id);
      try {
        await broker.endSession({ id });
      } catch (error) {
        // Not fatal: its path answers 404 already, and the record expires with its TTL.
        logger.warn(`MCP broker: could not end a session of removed endpoint ${name}: ${error}`);
      }
    }),
  );
}

/** The streams opened on curated endpoint `name`. */
function onEndpoint(name: string): (viewer: string | undefined) => boolean {
  return viewer => viewer !== undefined && parseViewer(viewer).endpoint === name;
}
