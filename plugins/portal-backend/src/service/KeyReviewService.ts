/*
 * Key reviews, one at a time or in bulk, and the approval a product in automatic approval
 * mode gives at once. DefaultPortalService delegates these to it.
 *
 * - approval generates the secret with a CSPRNG (generateApiKeySecret.ts) and labels it as
 *   its product's route's AuthPolicies require (read once per product and call); a key of
 *   an MCP product (an access request) gets no secret;
 * - bulk reviews: each item moved on its own (a compare-and-set in the store), answered in
 *   input order, one notification per recipient;
 * - a key is read with its product's owner and handed to the call's `check` before anything
 *   changes (checkedKey.ts); the store decides Pending → Approved/Rejected atomically.
 *
 * Events and notifications are best effort and never fail a call.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { isError } from '@backstage/errors';
import {
  type ApiKey,
  AUTOMATIC_APPROVAL_REVIEWER,
  type BulkReviewResult,
  isMcpTarget,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { keySecretLabelsForRoute } from '../resources/keySecretLabelsForRoute';
import type {
  KeyApproval,
  PortalStore,
  ReadOnlyResourceSource,
  StoredApiProduct,
} from '../store/types';
import { checkedKey } from './checkedKey';
import { generateApiKeySecret } from './generateApiKeySecret';
import type { PortalActors } from './PortalActors';
import type { PortalEventPublisher } from './PortalEventPublisher';
import type { KeyOfProduct, PortalNotifier } from './PortalNotifier';
import type { KeyCheck } from './portalService';
import { describeRef, productRefOfKey } from './records';
import type { ReviewDecision } from './types';

/** What an approval of a product's key stores: a secret or none, and the Secret's labels. */
interface SecretPlan {
  /** The key's product; undefined when it is gone (the store then reports the key's fate). */
  product: StoredApiProduct | undefined;
  issueSecret: boolean;
  secretLabels?: Record<string, string>;
}

/** Options of {@link KeyReviewService.create}. */
export interface KeyReviewServiceOptions {
  store: PortalStore;
  resources: ReadOnlyResourceSource;
  /** Who the caller is (the same instance as the other service layers'). */
  actors: PortalActors;
  /** Publishes `apikey.approved` / `apikey.rejected`; default: nothing is published. */
  events?: PortalEventPublisher;
  /** Notifies requesters of the decision; default: nobody is notified. */
  notifier?: PortalNotifier;
}

/** Reviews API key requests. See the file comment for the rules it enforces. */
export class KeyReviewService {
  readonly #store: PortalStore;
  readonly #resources: ReadOnlyResourceSource;
  readonly #actors: PortalActors;
  readonly #events: PortalEventPublisher | undefined;
  readonly #notifier: PortalNotifier | undefined;

  static create(options: KeyReviewServiceOptions): KeyReviewService {
    return new KeyReviewService(options);
  }

  private constructor(options: KeyReviewServiceOptions) {
    this.#store = options.store;
    this.#resources = options.resources;
    this.#actors = options.actors;
    this.#events = options.events;
    this.#notifier = options.notifier;
  }

  /** `PortalService.reviewRequest`: approves or rejects one Pending key. */
  async reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason: string | undefined,
    check: KeyCheck,
  ): Promise<ApiKey> {
    const review = await this.#beginReview(credentials, decision, reason, check);
    try {
      return await review.review(ref);
    } finally {
      await review.finish();
    }
  }

  /** `PortalService.bulkReview`: each item on its own, answered in input order. */
  async bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason: string | undefined,
    check: KeyCheck,
  ): Promise<BulkReviewResult[]> {
    const review = await this.#beginReview(credentials, decision, reason, check);
    const results: BulkReviewResult[] = [];
    // One item after the other: each is an independent compare-and-set in the store, and
    // the answer must list them in input order.
    for (const ref of refs) {
      const item = { namespace: ref.namespace, name: ref.name };
      try {
        results.push({
          ...item,
          success: true,
          apiKey: await review.review(ref),
        });
      } catch (error) {
        results.push({ ...item, success: false, error: toItemError(error) });
      }
    }
    await review.finish();
    return results;
  }

  /**
   * The approval a key request for `product` gets in automatic approval mode: a new secret
   * with the labels the product's route needs on it.
   */
  async automaticApproval(product: StoredApiProduct): Promise<KeyApproval> {
    if (isMcpTarget(product.spec.targetRef)) {
      // An access request: the requester's own sign-in is the credential.
      return { reviewedBy: AUTOMATIC_APPROVAL_REVIEWER };
    }
    return {
      reviewedBy: AUTOMATIC_APPROVAL_REVIEWER,
      secret: generateApiKeySecret(),
      secretLabels: await this.#secretLabelsFor(product),
    };
  }

  /**
   * Starts reviewing keys for one call. Each `review` reads the key (with its product's
   * owner), lets `check` decide, then moves it to Approved — with a new secret and the
   * labels its product's route needs on it, read once per product and call — or to
   * Rejected; the store decides atomically on its own read. `finish` then waits for the
   * events and notifies each requester once, so a bulk call does not send one notification
   * per item. `finish` never throws.
   */
  async #beginReview(
    credentials: BackstageCredentials,
    decision: ReviewDecision,
    reason: string | undefined,
    check: KeyCheck,
  ) {
    const actor = await this.#actors.requireUser(credentials, 'reviewing API key requests');
    const reviewed: KeyOfProduct[] = [];
    // A bulk call publishes its items' events side by side (each may be a round trip to the
    // events backend) and waits for all of them in `finish`.
    const publishing: Promise<void>[] = [];
    // Every key of one product needs the same secret (or none, for an MCP product) and
    // Secret labels: one product read and one AuthPolicy list per product and call (a live
    // list per key on Kubernetes otherwise). A rejection needs only the product (for its
    // event's target): one read per product and call as well.
    const secretPlanOnce = oncePerProduct(key => this.#secretPlanForKey(key));
    const productOnce = oncePerProduct(key => this.#store.getProduct(productRefOfKey(key)));
    const common = {
      reviewedBy: actor.userRef,
      ...(reason !== undefined && { reason }),
    };
    const review = async (ref: ObjectRef): Promise<ApiKey> => {
      const key = await checkedKey(this.#store, ref, check);
      let result: ApiKey;
      let product: StoredApiProduct | undefined;
      if (decision === 'approve') {
        const plan = await secretPlanOnce(key);
        product = plan.product;
        result = await this.#store.reviewKey(ref, {
          phase: 'Approved',
          ...common,
          ...(plan.issueSecret && { secret: generateApiKeySecret() }),
          ...(plan.secretLabels && { secretLabels: plan.secretLabels }),
        });
      } else {
        product = await productOnce(key);
        result = await this.#store.reviewKey(ref, {
          phase: 'Rejected',
          ...common,
        });
      }
      reviewed.push({ key: result, product });
      if (this.#events) {
        publishing.push(
          this.#events.keyChanged(
            decision === 'approve' ? 'apikey.approved' : 'apikey.rejected',
            result,
            actor.userRef,
            product,
          ),
        );
      }
      return result;
    };
    const finish = async () => {
      await Promise.all(publishing.splice(0));
      const keys = reviewed.splice(0);
      await this.#notifier?.keysReviewed(keys, decision, reason, actor.userRef);
    };
    return { review, finish };
  }

  /**
   * Whether `key` gets a secret once approved (not when its product is an MCP product) and
   * the labels its Secret needs; labels undefined when its product is gone (the store then
   * reports the key's fate).
   */
  async #secretPlanForKey(key: ApiKey): Promise<SecretPlan> {
    const product = await this.#store.getProduct(productRefOfKey(key));
    if (product && isMcpTarget(product.spec.targetRef)) return { product, issueSecret: false };
    return {
      product,
      issueSecret: true,
      secretLabels: product && (await this.#secretLabelsFor(product)),
    };
  }

  /**
   * The labels a key Secret of `product` needs for the gateway to accept it: those the
   * AuthPolicies on the product's route select API keys by (see keySecretLabelsOfPolicies).
   */
  async #secretLabelsFor(product: StoredApiProduct): Promise<Record<string, string>> {
    return keySecretLabelsForRoute(
      this.#resources,
      product.metadata.namespace,
      product.spec.targetRef.name,
    );
  }
}

/**
 * `load` for the first key of each product only; the others share its answer. A failed load
 * is tried again by the next key rather than failing all of them.
 */
function oncePerProduct<T>(load: (key: ApiKey) => Promise<T>): (key: ApiKey) => Promise<T> {
  const byProduct = new Map<string, Promise<T>>();
  return key => {
    const id = describeRef(productRefOfKey(key));
    let loaded = byProduct.get(id);
    if (!loaded) {
      loaded = load(key);
      byProduct.set(id, loaded);
      loaded.catch(() => byProduct.delete(id));
    }
    return loaded;
  };
}

const STATUS_BY_ERROR_NAME: Record<string, number> = {
  InputError: 400,
  AuthenticationError: 401,
  NotAllowedError: 403,
  NotFoundError: 404,
  ConflictError: 409,
  ServiceUnavailableError: 503,
};

/**
 * A bulk item's error. Only `@backstage/errors` (client mistakes, conflicts, an
 * unavailable store) become item results; anything else is a server fault and fails the
 * whole call, so it is logged by the error middleware instead of hidden in a 200.
 */
function toItemError(error: unknown): {
  name: string;
  message: string;
  statusCode: number;
} {
  if (isError(error) && STATUS_BY_ERROR_NAME[error.name] !== undefined) {
    return {
      name: error.name,
      message: error.message,
      statusCode: STATUS_BY_ERROR_NAME[error.name],
    };
  }
  throw error;
}
