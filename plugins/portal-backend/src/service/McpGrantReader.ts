/*
 * The live access grants of MCP products (contract mcp-access §4.8): Approved access requests
 * whose `expiresAt` is absent or in the future, each with its product's current plan for the
 * tier. The MCP broker's portal module reads them (its full sync pages the list, an event makes
 * it read one), so a grant names everything the broker needs and nothing secret.
 *
 * The store reads them (`listMcpGrantsPage`: the database's partial index of Approved access
 * requests by target, the Kubernetes store's target label), in its page order; this class
 * only turns a stored access request and its product into the grant the API answers.
 */
import { NotFoundError } from '@backstage/errors';
import {
  type ApiKey,
  isMcpTarget,
  type McpGrant,
  type McpGrantListQuery,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import type {
  Page,
  PageRequest,
  PortalStore,
  StoredApiProduct,
  StoredMcpGrant,
} from '../store/types';
import { describeRef, productRefOfKey } from './records';

/** The page size of a walk over every grant (a list asked for without a page). */
const WHOLE_LIST_PAGE_SIZE = 1000;

/** Reads live grants from the portal's store; see the file comment. */
export class McpGrantReader {
  readonly #store: PortalStore;
  readonly #now: () => Date;

  constructor(store: PortalStore, now: () => Date) {
    this.#store = store;
    this.#now = now;
  }

  /** One page of the live grants matching `query` (all of them without `page`). */
  async list(query: McpGrantListQuery, page?: PageRequest): Promise<Page<McpGrant>> {
    const filter = {
      namespace: query.namespace,
      productName: query.product,
      targetKind: query.targetKind,
      targetName: query.targetName,
      requestedBy: query.subject,
    };
    const now = this.#now();
    const toGrants = (stored: Page<StoredMcpGrant>) =>
      stored.items.flatMap(({ key, product }) => grantOf(key, product, now.getTime()) ?? []);
    if (page) {
      const stored = await this.#store.listMcpGrantsPage(filter, now, page);
      return { items: toGrants(stored), cursor: stored.cursor };
    }
    const items: McpGrant[] = [];
    let cursor: string | undefined;
    do {
      const stored = await this.#store.listMcpGrantsPage(filter, now, {
        limit: WHOLE_LIST_PAGE_SIZE,
        cursor,
      });
      items.push(...toGrants(stored));
      cursor = stored.cursor;
    } while (cursor !== undefined);
    return { items };
  }

  /** The live grant of one access request; NotFoundError unless it is one now. */
  async get(ref: ObjectRef): Promise<McpGrant> {
    const key = await this.#store.getKey(ref);
    const product = key && (await this.#store.getProduct(productRefOfKey(key)));
    const grant = key && product && grantOf(key, product, this.#now().getTime());
    if (!grant) {
      throw new NotFoundError(
        `${describeRef(ref)} is not a live access grant (no Approved, unexpired access request of an MCP product by that name)`,
      );
    }
    return grant;
  }
}

/** The grant a key is now, or undefined (not Approved, expired, not of an MCP product). */
function grantOf(key: ApiKey, product: StoredApiProduct, now: number): McpGrant | undefined {
  const target = product.spec.targetRef;
  if (!isMcpTarget(target) || key.status.phase !== 'Approved') return undefined;
  const expiresAt = key.spec.expiresAt;
  if (expiresAt !== undefined && Date.parse(expiresAt) <= now) return undefined;
  const plan = product.spec.plans?.find(candidate => candidate.tier === key.spec.planTier);
  return {
    key: {
      namespace: key.metadata.namespace,
      name: key.metadata.name,
      uid: key.metadata.uid,
    },
    product: {
      namespace: product.metadata.namespace,
      name: product.metadata.name,
      displayName: product.spec.displayName,
    },
    target: { kind: target.kind, name: target.name },
    subject: key.spec.requestedBy.userId.toLowerCase(),
    tier: key.spec.planTier,
    limits: { toolCalls: plan?.limits.toolCalls ?? [] },
    approvedAt: key.status.reviewedAt ?? key.metadata.creationTimestamp,
    ...(expiresAt !== undefined && { expiresAt }),
  };
}
