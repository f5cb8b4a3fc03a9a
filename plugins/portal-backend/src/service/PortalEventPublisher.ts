/*
 * Publishes the portal's state changes on Backstage's events service (spec §11), topic
 * `portal`, one event per record changed (a bulk review publishes one per key).
 *
 * Guarantees: an event is published only after its change is stored, and carries refs and
 * the actor only (see PortalEventPayload), never a secret. Failure mode: publishing is
 * best effort — the change is already stored, so a failed publish is logged (type and ref,
 * nothing else) and the portal call still succeeds; subscribers that must not miss a
 * change (the catalog module) also resynchronise on a schedule.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  PORTAL_EVENTS_TOPIC,
  type ApiKey,
  type ObjectRef,
  type PortalEventPayload,
  type PortalEventType,
} from '@devportal/plugin-portal-common';
import type { EventsService } from '@backstage/plugin-events-node';
import type { StoredApiProduct } from '../store/types';

/** Options of {@link PortalEventPublisher.create}. */
export interface PortalEventPublisherOptions {
  /** The events service; without one, events are not published (unit tests). */
  events?: EventsService;
  logger: LoggerService;
}

/** The product a key belongs to (keys live in their product's namespace). */
export function productRefOfKey(key: ApiKey): ObjectRef {
  return {
    namespace: key.metadata.namespace,
    name: key.spec.apiProductRef.name,
  };
}

/** The `target` of an event about `product` or one of its keys. */
function targetOf(product: StoredApiProduct): NonNullable<PortalEventPayload['target']> {
  return { kind: product.spec.targetRef.kind, name: product.spec.targetRef.name };
}

/** Publishes portal events; never throws. */
export class PortalEventPublisher {
  readonly #events: EventsService | undefined;
  readonly #logger: LoggerService;

  static create(options: PortalEventPublisherOptions): PortalEventPublisher {
    return new PortalEventPublisher(options);
  }

  private constructor(options: PortalEventPublisherOptions) {
    this.#events = options.events;
    this.#logger = options.logger;
  }

  /** Publishes an `apiproduct.*` event for `product`, with its target and uid. */
  async productChanged(
    type: Extract<PortalEventType, `apiproduct.${string}`>,
    product: StoredApiProduct,
    actor: string,
  ): Promise<void> {
    const ref = { namespace: product.metadata.namespace, name: product.metadata.name };
    await this.#publish({
      type,
      ref,
      actor,
      product: ref,
      target: targetOf(product),
      uid: product.metadata.uid,
    });
  }

  /**
   * Publishes an `apikey.*` event for `key`, with its uid and, when known, its product's
   * target (a subscriber for MCP access skips events without an MCP target).
   */
  async keyChanged(
    type: Extract<PortalEventType, `apikey.${string}`>,
    key: ApiKey,
    actor: string,
    product?: StoredApiProduct,
  ): Promise<void> {
    await this.#publish({
      type,
      ref: { namespace: key.metadata.namespace, name: key.metadata.name },
      actor,
      product: productRefOfKey(key),
      ...(product !== undefined && { target: targetOf(product) }),
      uid: key.metadata.uid,
    });
  }

  async #publish(payload: PortalEventPayload): Promise<void> {
    if (!this.#events) return;
    try {
      await this.#events.publish({
        topic: PORTAL_EVENTS_TOPIC,
        eventPayload: payload,
      });
    } catch (error) {
      this.#logger.warn(
        `Could not publish portal event ${payload.type} for ` +
          `${payload.ref.namespace}/${payload.ref.name}: ${(error as Error).message}`,
      );
    }
  }
}
