/*
 * Tells people about API key requests through Backstage's notifications service (spec §11):
 * - a new Pending request → the product's owners (the owner entity; for a group the
 *   notifications backend resolves its members), without the requester themself;
 * - a review (approve or reject, one key or a bulk call) → each requester once per call,
 *   with the reason, so 20 keys approved at once make one notification;
 * - a key deleted (an Approved one: revoked) by someone else → its requester, with the reason.
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
import type { ApiKey, ApiProduct, ObjectRef } from '@devportal/plugin-portal-common';
import {
  DEFAULT_REQUESTS_URL,
  DEFAULT_REQUEST_URL_TEMPLATE,
  type NotificationLinks,
} from '../config';
import { productRefOfKey } from './PortalEventPublisher';
import type { ReviewDecision } from './types';

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
    await this.#send(ownerRef, requester, {
      title: `New API key request for ${productName}`,
      description: `${requester} requests a ${key.spec.planTier} key for ${productName}${
        key.spec.useCase === undefined ? '' : `: ${key.spec.useCase}`
      }`,
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
    keys: ApiKey[],
    decision: ReviewDecision,
    reason: string | undefined,
    reviewer: string,
  ) {
    const verb = decision === 'approve' ? 'approved' : 'rejected';
    for (const [requester, ofRequester] of groupByRequester(keys)) {
      const [first] = ofRequester;
      const products = [...new Set(ofRequester.map(key => describeProduct(productRefOfKey(key))))];
      const what =
        ofRequester.length === 1
          ? `Your ${first.spec.planTier} API key request for ${products[0]} was ${verb}`
          : `${ofRequester.length} of your API key requests for ` +
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
  async keyDeleted(key: ApiKey, reason: string | undefined, actor: string) {
    if (key.spec.requestedBy.userId === actor) return;
    const product = describeProduct(productRefOfKey(key));
    const revoked = key.status?.phase === 'Approved';
    const what = revoked
      ? `Your ${key.spec.planTier} API key for ${product} was revoked`
      : `Your ${key.spec.planTier} API key request for ${product} was deleted`;
    await this.#send(key.spec.requestedBy.userId, actor, {
      title: what,
      description: reason === undefined ? `${what}.` : `${what}: ${reason}`,
      link: this.#links.requestsUrl,
      severity: revoked ? 'high' : 'normal',
      topic: productTopic(productRefOfKey(key)),
    });
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

/** The keys by requester, in the order of their first key. */
function groupByRequester(keys: ApiKey[]): Map<string, ApiKey[]> {
  const groups = new Map<string, ApiKey[]>();
  for (const key of keys) {
    const requester = key.spec.requestedBy.userId;
    groups.set(requester, [...(groups.get(requester) ?? []), key]);
  }
  return groups;
}
