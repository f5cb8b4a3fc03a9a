/*
 * Tells people about API key requests through Backstage's notifications service (spec §11):
 * - a new Pending request → the product's owners (the owner entity; for a group the
 *   notifications backend resolves its members), without the requester themself;
 * - a review (approve or reject, one key or a bulk call) → each requester once per call,
 *   with the reason, so 20 keys approved at once make one notification;
 * - a key deleted (an Approved one: revoked) by someone else → its requester, with the reason;
 * - keys found expired by the expiry task (contract mcp-access §4.5) → each requester once per
 *   run.
 * An access request of an MCP product (contract mcp-access §4.6) is worded as access to the
 * product ("Your access to Example tools expired"), named by its display name, since no key
 * is issued for it.
 * A notification about one product has that product's topic (`APIProduct <namespace>/<name>`),
 * so a user can mute one product; the rare bulk review that covers keys of one requester
 * for several products has the topic `API key requests` (one notification per recipient
 * wins over one topic per product). It links to the request, or to the request list when
 * it covers several.
 *
 * Guarantees: a notification names records, people, tiers, the use case and the reason
 * only, never a secret. Failure mode: notifying is best effort — the change is already stored, so a
 * failed send is logged (recipients and product, nothing else) and the call succeeds.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { NotificationService } from '@backstage/plugin-notifications-node';
import {
  isMcpTarget,
  type ApiKey,
  type ApiProduct,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import {
  DEFAULT_REQUESTS_URL,
  DEFAULT_REQUEST_URL_TEMPLATE,
  type NotificationLinks,
} from '../config';
import { productRefOfKey } from './PortalEventPublisher';
import type { StoredApiProduct } from '../store/types';
import type { ReviewDecision } from './types';

/** A key with its product as read for the change (undefined when the product is gone). */
export interface KeyOfProduct {
  key: ApiKey;
  product?: StoredApiProduct;
}

/** The topic of a notification about keys of several products. */
export const SEVERAL_PRODUCTS_TOPIC = 'API key requests';

/** The notification topic of a product: users mute a product by muting its topic. */
export function productTopic(ref: ObjectRef): string {
  return `APIProduct ${describeProduct(ref)}`;
}

/** Options of {@link PortalNotifier.create}. */
export interface PortalNotifierOptions {
  /** The notifications service; without one, nobody is notified (unit tests). */
  notifications?: NotificationService;
  logger: LoggerService;
  /** Where notifications link to; default `portal.notifications`' defaults. */
  links?: NotificationLinks;
}

/** Sends the portal's notifications; never throws. */
export class PortalNotifier {
  readonly #notifications: NotificationService | undefined;
  readonly #logger: LoggerService;
  readonly #links: NotificationLinks;

  static create(options: PortalNotifierOptions): PortalNotifier {
    return new PortalNotifier(options);
  }

  private constructor(options: PortalNotifierOptions) {
    this.#notifications = options.notifications;
    this.#logger = options.logger;
    this.#links = options.links ?? {
      requestUrlTemplate: DEFAULT_REQUEST_URL_TEMPLATE,
      requestsUrl: DEFAULT_REQUESTS_URL,
    };
  }

  /** A new Pending request: tells the product's owners, except the requester. */
  async keyRequested(key: ApiKey, product: ApiProduct, ownerRef: string) {
    const requester = key.spec.requestedBy.userId;
    const productName = product.spec.displayName;
    const target = product.spec.targetRef;
    const useCase = key.spec.useCase === undefined ? '' : `: ${key.spec.useCase}`;
    await this.#send(ownerRef, requester, {
      ...(isMcpTarget(target)
        ? {
            title: `New access request for ${productName} (${
              target.kind === 'MCPServer' ? 'MCP server' : 'MCP endpoint'
            } ${target.name})`,
            description: `${requester} requests ${key.spec.planTier} access to ${productName}${useCase}`,
          }
        : {
            title: `New API key request for ${productName}`,
            description: `${requester} requests a ${key.spec.planTier} key for ${productName}${useCase}`,
          }),
      link: this.#requestLink(key.metadata),
      severity: 'normal',
      topic: productTopic(productRefOfKey(key)),
    });
  }

  /**
   * Keys reviewed in one call: one notification per requester, carrying the reason.
   * `reviewer` (the caller) is not told about its own requests.
   */
  async keysReviewed(
    reviewed: KeyOfProduct[],
    decision: ReviewDecision,
    reason: string | undefined,
    reviewer: string,
  ) {
    const verb = decision === 'approve' ? 'approved' : 'rejected';
    for (const [requester, ofRequester] of groupByRequester(reviewed)) {
      const first = ofRequester[0].key;
      const products = productNames(ofRequester);
      const kind = ofRequester.every(isAccessRequest) ? 'access' : 'API key';
      const what =
        ofRequester.length === 1
          ? `Your ${first.spec.planTier} ${kind} request for ${products[0]} was ${verb}`
          : `${ofRequester.length} of your ${kind} requests for ` +
            `${products.join(', ')} were ${verb}`;
      await this.#send(requester, reviewer, {
        title: what,
        description: reason === undefined ? `${what}.` : `${what}: ${reason}`,
        link:
          ofRequester.length === 1 ? this.#requestLink(first.metadata) : this.#links.requestsUrl,
        severity: decision === 'approve' ? 'normal' : 'high',
        topic:
          products.length === 1 ? productTopic(productRefOfKey(first)) : SEVERAL_PRODUCTS_TOPIC,
      });
    }
  }

  /**
   * A key deleted by someone else (an admin): tells its requester, with the reason. Deleting
   * an Approved key revokes it; a requester deleting their own key is not told.
   */
  async keyDeleted({ key, product }: KeyOfProduct, reason: string | undefined, actor: string) {
    if (key.spec.requestedBy.userId === actor) return;
    const [name] = productNames([{ key, product }]);
    const revoked = key.status?.phase === 'Approved';
    const tier = key.spec.planTier;
    let what: string;
    // An access request's revocation says who and why in its title (contract mcp-access §4.6).
    let title: string | undefined;
    if (isAccessRequest({ key, product })) {
      what = revoked
        ? `Your access to ${name} was revoked by ${actor}`
        : `Your ${tier} access request for ${name} was deleted`;
      if (revoked && reason !== undefined) title = `${what}: ${reason}`;
    } else {
      what = revoked
        ? `Your ${tier} API key for ${name} was revoked`
        : `Your ${tier} API key request for ${name} was deleted`;
    }
    await this.#send(key.spec.requestedBy.userId, actor, {
      title: title ?? what,
      description: reason === undefined ? `${what}.` : `${what}: ${reason}`,
      link: this.#links.requestsUrl,
      severity: revoked ? 'high' : 'normal',
      topic: productTopic(productRefOfKey(key)),
    });
  }

  /**
   * Keys the expiry task found expired in one run: one notification per requester
   * ("Your access to Example tools expired"; "3 of your API keys and access grants expired").
   */
  async keysExpired(expired: KeyOfProduct[], actor: string) {
    for (const [requester, ofRequester] of groupByRequester(expired)) {
      const first = ofRequester[0];
      const products = productNames(ofRequester);
      let what: string;
      if (ofRequester.length > 1) {
        what = `${ofRequester.length} of your API keys and access grants for ${products.join(', ')} expired`;
      } else if (isAccessRequest(first)) {
        what = `Your access to ${products[0]} expired`;
      } else {
        what = `Your ${first.key.spec.planTier} API key for ${products[0]} expired`;
      }
      await this.#send(requester, actor, {
        title: what,
        description: `${what}. Request the product again to renew it.`,
        link:
          ofRequester.length === 1
            ? this.#requestLink(first.key.metadata)
            : this.#links.requestsUrl,
        severity: 'normal',
        topic:
          products.length === 1 ? productTopic(productRefOfKey(first.key)) : SEVERAL_PRODUCTS_TOPIC,
      });
    }
  }

  #requestLink(ref: ObjectRef): string {
    return this.#links.requestUrlTemplate
      .replace(/\{namespace\}/g, encodeURIComponent(ref.namespace))
      .replace(/\{name\}/g, encodeURIComponent(ref.name));
  }

  async #send(
    recipient: string,
    excluded: string,
    payload: Parameters<NotificationService['send']>[0]['payload'],
  ) {
    if (!this.#notifications) return;
    try {
      await this.#notifications.send({
        recipients: {
          type: 'entity',
          entityRef: recipient,
          excludeEntityRef: excluded,
        },
        payload,
      });
    } catch (error) {
      const reason = (error as Error).message;
      this.#logger.warn(
        `Could not send the portal notification on ${payload.topic} to ${recipient}: ${reason}`,
      );
    }
  }
}

function describeProduct(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** Whether a key is an access request of an MCP product (its product targets an MCP server). */
function isAccessRequest({ product }: KeyOfProduct): boolean {
  return product !== undefined && isMcpTarget(product.spec.targetRef);
}

/**
 * The distinct product names of some keys, in order: an MCP product's display name (access
 * requests are worded as access to it), otherwise `namespace/name`.
 */
function productNames(keys: KeyOfProduct[]): string[] {
  return [
    ...new Set(
      keys.map(entry =>
        isAccessRequest(entry)
          ? entry.product!.spec.displayName
          : describeProduct(productRefOfKey(entry.key)),
      ),
    ),
  ];
}

/** The keys by requester, in the order of their first key. */
function groupByRequester(keys: KeyOfProduct[]): Map<string, KeyOfProduct[]> {
  const groups = new Map<string, KeyOfProduct[]>();
  for (const entry of keys) {
    const requester = entry.key.spec.requestedBy.userId;
    groups.set(requester, [...(groups.get(requester) ?? []), entry]);
  }
  return groups;
}
