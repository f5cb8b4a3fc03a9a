/*
 * The catalog entity provider of the MCP broker's servers (contract mcp-access §2.7–§2.8),
 * built like the portal's PortalEntityProvider.
 *
 * - `refresh()` is the full synchronisation: it reads `GET /servers` and replaces the
 *   provider's entities with one per server (a `full` mutation, so removed servers lose their
 *   entities). It runs on the task runner given, from the moment the catalog connects it.
 * - `onBrokerEvent()` takes an event of topic `mcp-broker` and enqueues a delta for that one
 *   server: it re-reads `GET /servers/:kind/:name` and applies a `delta`, the entity added, or
 *   removed on 404. It never trusts the payload, so a late or repeated event cannot bring back
 *   an old state. A delta for a server that already has one waiting is dropped (coalescing):
 *   every broker replica publishes each change, and a burst becomes one read.
 *
 * Guarantees: full syncs and deltas run one at a time, in arrival order. A server that is only
 * unreachable stays (the broker still describes it). Failure modes: a failed read or mutation
 * is logged and the next full sync repairs it; events before the catalog connects the provider
 * are dropped (the start-up sync covers them).
 */
import type { LoggerService, SchedulerServiceTaskRunner } from '@backstage/backend-plugin-api';
import { stringifyEntityRef } from '@backstage/catalog-model';
import { ResponseError } from '@backstage/errors';
import type { EntityProvider, EntityProviderConnection } from '@backstage/plugin-catalog-node';
import {
  isMcpBrokerEvent,
  type McpBrokerClient,
  type McpServerDescription,
  type McpServerKind,
} from '@devportal/plugin-mcp-broker-common';
import { mcpEntityName, serverToEntity, type ServerEntityOptions } from './serverEntity';

/** The provider's name in the catalog (and its entities' location keys' prefix). @public */
export const MCP_BROKER_ENTITY_PROVIDER_NAME = 'mcp-broker-servers';

/** Options of {@link McpBrokerEntityProvider.create}. @public */
export interface McpBrokerEntityProviderOptions {
  /** A client of the broker that may read every server (a service token). */
  client: McpBrokerClient;
  /** Where failed reads and syncs are reported. */
  logger: LoggerService;
  /** Links and default owner of the entities: see ServerEntityOptions. */
  entityOptions: ServerEntityOptions;
  /**
   * Runs the full synchronisation (at start-up and on its schedule); without one, only
   * explicit `refresh()` calls synchronise.
   */
  taskRunner?: SchedulerServiceTaskRunner;
}

type ServerRef = { kind: McpServerKind; name: string };

/** Publishes the MCP broker's servers as API entities of type `mcp-server`. @public */
export class McpBrokerEntityProvider implements EntityProvider {
  readonly #client: McpBrokerClient;
  readonly #logger: LoggerService;
  readonly #entityOptions: ServerEntityOptions;
  readonly #taskRunner: SchedulerServiceTaskRunner | undefined;
  #connection: EntityProviderConnection | undefined;
  /** The tail of the queue that runs syncs and deltas one at a time. */
  #queue: Promise<void> = Promise.resolve();
  /** Servers with a delta enqueued that has not started yet (`kind/name`). */
  readonly #waiting = new Set<string>();

  /** Builds the provider; nothing runs until the catalog connects it. */
  static create(options: McpBrokerEntityProviderOptions): McpBrokerEntityProvider {
    return new McpBrokerEntityProvider(options);
  }

  private constructor(options: McpBrokerEntityProviderOptions) {
    this.#client = options.client;
    this.#logger = options.logger;
    this.#taskRunner = options.taskRunner;
    this.#entityOptions = options.entityOptions;
  }

  /** {@inheritDoc @backstage/plugin-catalog-node#EntityProvider.getProviderName} */
  getProviderName(): string {
    return MCP_BROKER_ENTITY_PROVIDER_NAME;
  }

  /** Keeps the connection and starts the scheduled full synchronisation. */
  async connect(connection: EntityProviderConnection): Promise<void> {
    this.#connection = connection;
    // Scheduled only now: a sync before the catalog connects would have nowhere to go.
    await this.#taskRunner?.run({
      id: `${MCP_BROKER_ENTITY_PROVIDER_NAME}:refresh`,
      fn: () => this.refresh(),
    });
  }

  /** The full synchronisation; rejects when the broker or the catalog fails. */
  refresh(): Promise<void> {
    return this.#enqueue(async () => {
      const connection = this.#requireConnection();
      const { items } = await this.#client.listServers();
      const entities = items.map(description => this.#deferred(description));
      await connection.applyMutation({ type: 'full', entities });
      this.#logger.info(`Synchronised ${entities.length} MCP servers into the catalog`);
    });
  }

  /**
   * Takes an event of topic `mcp-broker` and schedules a delta for its server (other payloads
   * are ignored). Returns at once: the events service waits for its subscribers.
   */
  async onBrokerEvent(payload: unknown): Promise<void> {
    if (!isMcpBrokerEvent(payload) || this.#connection === undefined) return;
    const ref: ServerRef = { kind: payload.server.kind, name: payload.server.name };
    const key = `${ref.kind}/${ref.name}`;
    if (this.#waiting.has(key)) return;
    this.#waiting.add(key);
    this.#enqueue(() => {
      this.#waiting.delete(key);
      return this.#applyDelta(ref);
    }).catch(error =>
      this.#logger.warn(
        `Could not update the catalog entity of MCP ${ref.kind} ${ref.name} ` +
          `(the next full sync will): ${error}`,
      ),
    );
  }

  /** Waits until every queued sync and delta has run (for shutdown). */
  async drain(): Promise<void> {
    await this.#queue.catch(() => undefined);
  }

  async #applyDelta(ref: ServerRef): Promise<void> {
    const connection = this.#requireConnection();
    const description = await this.#client.getServer(ref).catch(error => {
      if (error instanceof ResponseError && error.response.status === 404) return undefined;
      throw error;
    });
    if (description !== undefined) {
      await connection.applyMutation({
        type: 'delta',
        added: [this.#deferred(description)],
        removed: [],
      });
      return;
    }
    const entityRef = stringifyEntityRef({
      kind: 'API',
      namespace: 'default',
      name: mcpEntityName(ref),
    });
    await connection.applyMutation({
      type: 'delta',
      added: [],
      removed: [{ entityRef, locationKey: this.#locationKey(ref) }],
    });
  }

  #deferred(description: McpServerDescription) {
    return {
      entity: serverToEntity(description, this.#entityOptions),
      locationKey: this.#locationKey({ kind: description.kind, name: description.server }),
    };
  }

  #locationKey(ref: ServerRef): string {
    return `${MCP_BROKER_ENTITY_PROVIDER_NAME}:${ref.kind}/${ref.name}`;
  }

  #requireConnection(): EntityProviderConnection {
    if (this.#connection === undefined) {
      throw new Error('the catalog has not connected the MCP broker entity provider yet');
    }
    return this.#connection;
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
