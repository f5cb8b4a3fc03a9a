/*
 * The live access grants of MCP products (contract mcp-access §4.8): Approved access requests
 * whose `expiresAt` is absent or in the future, each with its product's current plan for the
 * tier. The MCP broker's portal module reads them (its full sync pages the list, an event makes
 * it read one), so a grant names everything the broker needs and nothing secret.
 *
 * How the list is built: the MCP products (store filter by namespace; few compared with keys),
 * then each one's Approved keys (store filter by product, phase and requester), filtered by
 * expiry at `now`. Pages are keyset pages over the key's (creationTimestamp, namespace, name),
 * the order of P§9, so a walk never returns a grant twice and never skips one that existed
 * when it began (store/keysetCursor.ts's `pageInMemory`, as the manifest source pages).
 */
import { NotFoundError } from '@backstage/errors';
import {
  type ApiKey,
  isMcpTarget,
  type McpGrant,
  type McpGrantListQuery,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { compareKeysetPositions, type KeysetPosition, pageInMemory } from '../store/keysetCursor';
import type { Page, PageRequest, PortalStore, StoredApiProduct } from '../store/types';
import { describeRef, productRefOfKey } from './records';

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
    const products = (await this.#store.listProducts({ namespace: query.namespace })).filter(
      product =>
        isMcpTarget(product.spec.targetRef) &&
        (query.product === undefined || product.metadata.name === query.product) &&
        (query.targetKind === undefined || product.spec.targetRef.kind === query.targetKind) &&
        (query.targetName === undefined || product.spec.targetRef.name === query.targetName),
    );
    const now = this.#now().getTime();
    const grants: Array<{ grant: McpGrant; position: KeysetPosition }> = [];
    for (const product of products) {
      const keys = await this.#store.listKeys({
        namespace: product.metadata.namespace,
        productName: product.metadata.name,
        phase: 'Approved',
        ...(query.subject !== undefined && { requestedBy: query.subject }),
      });
      for (const key of keys) {
        const grant = grantOf(key, product, now);
        if (grant) grants.push({ grant, position: positionOf(key) });
      }
    }
    if (page) {
      const { items, cursor } = pageInMemory(grants, entry => entry.position, page);
      return { items: items.map(entry => entry.grant), cursor };
    }
    return {
      items: grants
        .sort((a, b) => compareKeysetPositions(a.position, b.position))
        .map(entry => entry.grant),
    };
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

/** A key's place in the list (P§9's order). */
function positionOf(key: ApiKey): KeysetPosition {
  return {
    createdAt: key.metadata.creationTimestamp,
    namespace: key.metadata.namespace,
    name: key.metadata.name,
  };
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
