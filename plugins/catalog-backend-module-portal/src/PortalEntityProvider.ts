/*
 * The catalog entity provider of the portal's API products (spec §10).
 *
 * - `refresh()` is the full synchronisation: it lists every product through the portal's
 *   REST API and replaces the provider's entities with those of the Published ones (a
 *   `full` mutation, so Draft and deleted products lose their entities). It runs on the
 *   task runner given, from the moment the catalog connects the provider (start-up).
 * - `onPortalEvent()` takes an `apiproduct.*` event and, without waiting, reads that one
 *   product again and applies a `delta` mutation: added when Published, removed when Draft
 *   or gone. It reads the product rather than trusting the event, so a late or repeated
 *   event cannot bring back an old state.
 *
 * Guarantees: full syncs and deltas run one at a time, in arrival order, so a delta never
 * interleaves with a full sync of this replica. Failure modes: a failed read or mutation is
 * logged and the next full sync repairs it; events that arrive before the catalog has
 * connected the provider are dropped (the start-up sync covers them).
 */
import type { LoggerService, SchedulerServiceTaskRunner } from '@backstage/backend-plugin-api';
import { stringifyEntityRef } from '@backstage/catalog-model';
import { ResponseError } from '@backstage/errors';
import type {
  DeferredEntity,
  EntityProvider,
  EntityProviderConnection,
} from '@backstage/plugin-catalog-node';
import {
  isApiProductEvent,
  type ApiProduct,
  type ObjectRef,
  type PortalClient,
} from '@devportal/plugin-portal-common';
import {
  apiEntityName,
  isPublished,
  productToEntity,
  type ProductEntityOptions,
} from './productEntity';

/** The provider's name in the catalog (and its entities' location keys' prefix). @public */
export const PORTAL_ENTITY_PROVIDER_NAME = 'portal-api-products';

/** Products per portal page during a full synchronisation. */
const SYNC_PAGE_LIMIT = 500;

/** Options of {@link PortalEntityProvider.create}. @public */
export interface PortalEntityProviderOptions {
  /** A client of the portal that may list every product (a service token). */
  client: PortalClient;
  /** Where failed reads and syncs are reported. */
  logger: LoggerService;
  /** The address of a product in the portal's frontend: see ProductEntityOptions. */
  productUrlTemplate: string;
  /**
   * Runs the full synchronisation (at start-up and on its schedule); without one, only
   * explicit `refresh()` calls synchronise.
   */
  taskRunner?: SchedulerServiceTaskRunner;
}

/** Publishes the portal's Published API products as API entities. @public */
export class PortalEntityProvider implements EntityProvider {
  readonly #client: PortalClient;
  readonly #logger: LoggerService;
  readonly #entityOptions: ProductEntityOptions;
  readonly #taskRunner: SchedulerServiceTaskRunner | undefined;
  #connection: EntityProviderConnection | undefined;
  /** The tail of the queue that runs syncs and deltas one at a time. */
  #queue: Promise<void> = Promise.resolve();

  /** Builds the provider; nothing runs until the catalog connects it. */
  static create(options: PortalEntityProviderOptions): PortalEntityProvider {
    return new PortalEntityProvider(options);
  }

  private constructor(options: PortalEntityProviderOptions) {
    this.#client = options.client;
    this.#logger = options.logger;
    this.#taskRunner = options.taskRunner;
    this.#entityOptions = {
      productUrlTemplate: options.productUrlTemplate,
      location: `${PORTAL_ENTITY_PROVIDER_NAME}:portal`,
    };
  }

  /** {@inheritDoc @backstage/plugin-catalog-node#EntityProvider.getProviderName} */
  getProviderName(): string {
    return PORTAL_ENTITY_PROVIDER_NAME;
  }

  /** Keeps the connection and starts the scheduled full synchronisation. */
  async connect(connection: EntityProviderConnection): Promise<void> {
    this.#connection = connection;
    // Scheduled only now: a sync before the catalog connects would have nowhere to go.
    await this.#taskRunner?.run({
      id: `${PORTAL_ENTITY_PROVIDER_NAME}:refresh`,
      fn: () => this.refresh(),
    });
  }

  /** The full synchronisation; rejects when the portal or the catalog fails. */
  refresh(): Promise<void> {
    return this.#enqueue(async () => {
      const connection = this.#requireConnection();
      // Page by page (bounded answers from the portal); the full mutation needs them all.
      const items: ApiProduct[] = [];
      const pages = this.#client.listApiProductsPages({}, { limit: SYNC_PAGE_LIMIT });
      for await (const page of pages) {
        items.push(...page.items);
      }
      const entities = items
        .filter(isPublished)
        .map(product => this.#deferred(product))
        .filter((entity): entity is DeferredEntity => entity !== undefined);
      await connection.applyMutation({ type: 'full', entities });
      this.#logger.info(
        `Synchronised ${entities.length} Published API products of ${items.length} ` +
          'into the catalog',
      );
    });
  }

  /**
   * Takes an event of topic `portal`: an `apiproduct.*` event schedules a delta for its
   * product; other events are ignored. Returns at once (the events service waits for its
   * subscribers, and the portal call that published the event should not).
   */
  async onPortalEvent(payload: unknown): Promise<void> {
    if (!isApiProductEvent(payload) || this.#connection === undefined) return;
    const ref = {
      namespace: payload.product.namespace,
      name: payload.product.name,
    };
    this.#enqueue(() => this.#applyDelta(ref)).catch(error =>
      this.#logger.warn(
        `Could not update the API entity of ${ref.namespace}/${ref.name} ` +
          `(the next full sync will): ${error}`,
      ),
    );
  }

  /** Waits until every queued sync and delta has run (for shutdown). */
  async drain(): Promise<void> {
    await this.#queue.catch(() => undefined);
  }

  async #applyDelta(ref: ObjectRef): Promise<void> {
    const connection = this.#requireConnection();
    const product = await this.#client.getApiProduct(ref).catch(error => {
      if (error instanceof ResponseError && error.response.status === 404) {
        return undefined;
      }
      throw error;
    });
    const entity =
      product !== undefined && isPublished(product) ? this.#deferred(product) : undefined;
    if (entity !== undefined) {
      await connection.applyMutation({
        type: 'delta',
        added: [entity],
        removed: [],
      });
      return;
    }
    const entityRef = stringifyEntityRef({
      kind: 'API',
      namespace: 'default',
      name: apiEntityName(ref),
    });
    await connection.applyMutation({
      type: 'delta',
      added: [],
      removed: [{ entityRef, locationKey: this.#locationKey(ref) }],
    });
  }

  #deferred(product: Parameters<typeof productToEntity>[0]): DeferredEntity | undefined {
    const entity = productToEntity(product, this.#entityOptions);
    if (entity === undefined) {
      this.#logger.warn(
        `API product ${product.metadata.namespace}/${product.metadata.name} has no owner; ` +
          'it gets no API entity',
      );
      return undefined;
    }
    return { entity, locationKey: this.#locationKey(product.metadata) };
  }

  #locationKey(ref: ObjectRef): string {
    return `${PORTAL_ENTITY_PROVIDER_NAME}:${ref.namespace}/${ref.name}`;
  }

  #requireConnection(): EntityProviderConnection {
    if (this.#connection === undefined) {
      throw new Error('the catalog has not connected the portal entity provider yet');
    }
    return this.#connection;
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
