/*
 * A PortalStore made of one part per resource: products, key requests, access grants (reads
 * of key requests with their products), key secrets. Both
 * stores (DatabasePortalStore, KubernetesPortalStore) are such a composition of their own
 * parts; this class is the delegation they share, so that each PortalStore method is
 * routed in one place.
 */
import type { ApiKey, ObjectRef } from '@devportal/plugin-portal-common';
import type {
  KeyFilter,
  KeyReview,
  McpGrantFilter,
  NewApiKey,
  NewApiProduct,
  Page,
  PageRequest,
  PendingKeyUpdate,
  PortalStore,
  ProductFilter,
  StoredApiProduct,
  StoredMcpGrant,
  UnusedTiersCondition,
} from './types';

/** The product methods of a {@link PortalStore}. */
export type PortalProductStore = Pick<
  PortalStore,
  | 'createProduct'
  | 'getProduct'
  | 'listProducts'
  | 'listProductsPage'
  | 'replaceProduct'
  | 'deleteProduct'
>;

/** The key request methods of a {@link PortalStore}. */
export type PortalKeyRequestStore = Pick<
  PortalStore,
  | 'createKey'
  | 'getKey'
  | 'listKeys'
  | 'listKeysPage'
  | 'updatePendingKey'
  | 'reviewKey'
  | 'deleteKey'
  | 'claimExpiryAnnouncements'
>;

/** The access grant reads of a {@link PortalStore}. */
export type PortalMcpGrantStore = Pick<PortalStore, 'listMcpGrantsPage' | 'countLiveGrants'>;

/** The key secret methods of a {@link PortalStore}. */
export type PortalKeySecretStore = Pick<PortalStore, 'revealSecret'>;

/** The parts of a {@link ComposedPortalStore}, one per resource. */
export interface PortalStoreParts {
  products: PortalProductStore;
  keys: PortalKeyRequestStore;
  grants: PortalMcpGrantStore;
  secrets: PortalKeySecretStore;
}

/** A {@link PortalStore} that hands each method to the part for its resource. */
export class ComposedPortalStore implements PortalStore {
  readonly #products: PortalProductStore;
  readonly #keys: PortalKeyRequestStore;
  readonly #grants: PortalMcpGrantStore;
  readonly #secrets: PortalKeySecretStore;

  protected constructor(parts: PortalStoreParts) {
    this.#products = parts.products;
    this.#keys = parts.keys;
    this.#grants = parts.grants;
    this.#secrets = parts.secrets;
  }

  // --- products ---------------------------------------------------------------------

  createProduct(product: NewApiProduct): Promise<StoredApiProduct> {
    return this.#products.createProduct(product);
  }

  getProduct(ref: ObjectRef): Promise<StoredApiProduct | undefined> {
    return this.#products.getProduct(ref);
  }

  listProducts(filter: ProductFilter): Promise<StoredApiProduct[]> {
    return this.#products.listProducts(filter);
  }

  listProductsPage(filter: ProductFilter, page: PageRequest): Promise<Page<StoredApiProduct>> {
    return this.#products.listProductsPage(filter, page);
  }

  replaceProduct(
    product: StoredApiProduct,
    unused?: UnusedTiersCondition,
  ): Promise<StoredApiProduct> {
    return this.#products.replaceProduct(product, unused);
  }

  deleteProduct(ref: ObjectRef): Promise<void> {
    return this.#products.deleteProduct(ref);
  }

  // --- keys -------------------------------------------------------------------------

  createKey(key: NewApiKey): Promise<ApiKey> {
    return this.#keys.createKey(key);
  }

  getKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    return this.#keys.getKey(ref);
  }

  listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    return this.#keys.listKeys(filter);
  }

  listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>> {
    return this.#keys.listKeysPage(filter, page);
  }

  updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey> {
    return this.#keys.updatePendingKey(ref, update);
  }

  reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey> {
    return this.#keys.reviewKey(ref, review);
  }

  deleteKey(ref: ObjectRef): Promise<void> {
    return this.#keys.deleteKey(ref);
  }

  claimExpiryAnnouncements(now: Date, limit: number): Promise<ApiKey[]> {
    return this.#keys.claimExpiryAnnouncements(now, limit);
  }

  // --- access grants ----------------------------------------------------------------

  listMcpGrantsPage(
    filter: McpGrantFilter,
    now: Date,
    page: PageRequest,
  ): Promise<Page<StoredMcpGrant>> {
    return this.#grants.listMcpGrantsPage(filter, now, page);
  }

  countLiveGrants(product: ObjectRef, tier: string, now: Date): Promise<number> {
    return this.#grants.countLiveGrants(product, tier, now);
  }

  // --- secrets ----------------------------------------------------------------------

  revealSecret(ref: ObjectRef): Promise<string> {
    return this.#secrets.revealSecret(ref);
  }
}
