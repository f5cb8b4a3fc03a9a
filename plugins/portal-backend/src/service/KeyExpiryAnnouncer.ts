/*
 * The portal's announcement of expired keys (contract mcp-access §4.5): the scheduled task
 * `portal-key-expiry` runs this once a minute on one replica at a time. Expiry itself needs
 * nothing from the portal: `expiresAt` travels with a grant and the broker ends it on its own
 * clock; for HTTP keys the page shows "Expired". This only tells people and subscribers.
 *
 * A run claims up to {@link EXPIRY_CLAIMS_PER_RUN} Approved keys whose `expiresAt` has passed
 * (`PortalStore.claimExpiryAnnouncements`, a compare-and-set per key, so concurrent runs on
 * several replicas announce each key once), publishes `apikey.expired` for each (actor
 * `system:key-expiry`, with its product's target), then notifies each requester once for the
 * run. More keys than a run claims wait for the next run.
 *
 * Failure modes: a claim is final, so a key whose event or notification failed is not
 * announced again (at most once; both are best effort and logged by their senders, and the
 * broker's full sync does not need the event). A failed claim fails the run, which the
 * scheduler logs and retries at the next tick. A product that cannot be read after the claim
 * is logged and the key announced without it (no target in the event, the key's own wording
 * in the notification), rather than losing the announcement.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { PortalStore, StoredApiProduct } from '../store/types';
import type { PortalEventPublisher } from './PortalEventPublisher';
import type { KeyOfProduct, PortalNotifier } from './PortalNotifier';
import { describeRef, productRefOfKey } from './records';

/** The actor of `apikey.expired` events and expiry notifications. */
export const KEY_EXPIRY_ACTOR = 'system:key-expiry';
/** Most keys one run claims (contract mcp-access §4.5). */
export const EXPIRY_CLAIMS_PER_RUN = 500;

/** Options of {@link KeyExpiryAnnouncer.create}. */
export interface KeyExpiryAnnouncerOptions {
  store: PortalStore;
  events?: PortalEventPublisher;
  notifier?: PortalNotifier;
  logger: LoggerService;
  /** The clock; default `new Date()`. */
  now?: () => Date;
}

/** Announces expired keys once each; see the file comment. */
export class KeyExpiryAnnouncer {
  readonly #options: KeyExpiryAnnouncerOptions;
  readonly #now: () => Date;

  static create(options: KeyExpiryAnnouncerOptions): KeyExpiryAnnouncer {
    return new KeyExpiryAnnouncer(options);
  }

  private constructor(options: KeyExpiryAnnouncerOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** One run: claims, publishes and notifies; resolves to the number of keys announced. */
  async run(): Promise<number> {
    const { store, events, notifier, logger } = this.#options;
    const claimed = await store.claimExpiryAnnouncements(this.#now(), EXPIRY_CLAIMS_PER_RUN);
    if (claimed.length === 0) return 0;
    const products = new Map<string, Promise<StoredApiProduct | undefined>>();
    const expired: KeyOfProduct[] = [];
    for (const key of claimed) {
      const ref = productRefOfKey(key);
      const id = describeRef(ref);
      if (!products.has(id)) {
        products.set(
          id,
          store.getProduct(ref).catch((error: unknown) => {
            logger.warn(
              `Key expiry: could not read API product ${id}; announcing its keys without it: ${
                (error as Error).message
              }`,
            );
            return undefined;
          }),
        );
      }
      const product = await products.get(id);
      await events?.keyChanged('apikey.expired', key, KEY_EXPIRY_ACTOR, product);
      expired.push({ key, product });
    }
    await notifier?.keysExpired(expired, KEY_EXPIRY_ACTOR);
    logger.info(`Announced the expiry of ${claimed.length} API key(s) and access grant(s)`);
    return claimed.length;
  }
}
