/*
 * The API key requests of the database store: `portal_api_keys` (PK namespace+name, FK
 * namespace+product_name → products ON DELETE CASCADE, indexes on requested_by,
 * namespace+product_name, phase, and a partial unique index allowing one Pending request
 * per requester+product+tier). Their secrets: DatabaseKeySecrets.
 *
 * Guarantees, each from a single statement or transaction rather than read-check-write:
 * - reviewKey / updatePendingKey: `UPDATE … WHERE phase = 'Pending'`; zero rows → read
 *   the phase for the ConflictError (or NotFoundError). An approval's secret is written
 *   in the same transaction. Approving an access request (a key with `mcp_target`), and
 *   creating one approved, reads its product's plans FOR SHARE in the transaction and
 *   refuses a tier the product no longer offers: the lock orders it with a replace that
 *   drops the tier (DatabaseProductStore.ts), so a grant never outlives its plan.
 * - Duplicate Pending requests: the partial unique index, so concurrent creates race
 *   to the index, not to a prior SELECT.
 * - createKey copies the product's MCP target into `mcp_target` (read in the same
 *   transaction), so the grant list and count read keys by target without the products.
 * - createKey for a vanishing product: the foreign key (PostgreSQL locks the product row
 *   while inserting; a concurrent product delete cascades over the new key).
 * - deleteKey: one transaction, plus FK cascades for rows written by transactions that
 *   commit while the delete waits.
 * - claimExpiryAnnouncements: `UPDATE … SET expiry_announced_at WHERE … AND
 *   expiry_announced_at IS NULL` per candidate; only the caller whose update hit the row
 *   has claimed it. Candidates come from the partial index of
 *   migrations/20261206000000_key_expiry.js (Approved, not announced), narrowed by
 *   expiryDue.ts's text bound and then checked by time.
 *
 * Lists: the ownership filter is a UNION ALL of two index-driven queries (by requester;
 * by products whose owner is one of the caller's refs, joined to keys by (namespace,
 * product_name)); in pages each half is a keyset query of its own (the requester half an
 * index range, the product-owner half sorts only the keys of the caller's products after
 * the cursor), so its cost follows the result size, not the table size (see the comment
 * of DatabasePortalStore.ts for figures).
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { ApiKey, ObjectRef } from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import type { DatabaseKeySecrets } from './DatabaseKeySecrets';
import { classifyDatabaseError, mapDatabaseError } from './databaseErrors';
import {
  KEYS_TABLE,
  KEY_COLUMNS,
  PRODUCTS_TABLE,
  keyFromRow,
  mcpTargetColumn,
  nowTimestamp,
  type KeyRow,
  type ProductRow,
} from './databaseRows';
import { dueExpiryTextBound, isExpiryDue } from './expiryDue';
import { generateKeyName } from './generateKeyName';
import { cursorPosition, pageOf, pageQuery } from './keysetPages';
import { offeredTiers, tierNotOfferedError } from './planTierConflicts';
import { refText } from './productOwner';
import type { KeyFilter, KeyReview, NewApiKey, Page, PageRequest, PendingKeyUpdate } from './types';

/** Attempts at a fresh generated key name when one collides (odds ~1e-11 each). */
const KEY_NAME_ATTEMPTS = 5;

/** The key requests of the database `PortalStore`. See the comment at the top of this file. */
export class DatabaseKeyRequestStore {
  constructor(
    private readonly db: Knex,
    private readonly secrets: DatabaseKeySecrets,
  ) {}

  /** See `PortalStore.createKey`. */
  async createKey(key: NewApiKey): Promise<ApiKey> {
    const productName = key.spec.apiProductRef.name;
    const productRef = { namespace: key.namespace, name: productName };
    const missingProduct = `API product ${refText(productRef)} not found`;
    for (let attempt = 1; ; attempt++) {
      const now = nowTimestamp();
      const row: KeyRow = {
        namespace: key.namespace,
        name: generateKeyName(productName),
        uid: randomUUID(),
        resource_version: 1,
        created_at: now,
        product_name: productName,
        plan_tier: key.spec.planTier,
        use_case: key.spec.useCase ?? null,
        requested_by: key.spec.requestedBy.userId,
        requester_email: key.spec.requestedBy.email ?? null,
        expires_at: key.spec.expiresAt ?? null,
        phase: key.approval ? 'Approved' : 'Pending',
        reviewed_by: key.approval?.reviewedBy ?? null,
        reviewed_at: key.approval ? now : null,
        reason: key.approval?.reason ?? null,
        secret_revealed: false,
        secret_revealed_at: null,
        mcp_target: null,
      };
      try {
        await this.db.transaction(async trx => {
          // The check gives a clear error; the foreign key makes it race-free. Locked for
          // an approved access request: its tier is checked against the plans below.
          const product = await trx<ProductRow>(PRODUCTS_TABLE)
            .where(productRef)
            .modify(query => (key.approval ? query.forShare() : query))
            .first('target_kind', 'target_name', 'spec');
          if (!product) {
            throw new NotFoundError(missingProduct);
          }
          // An MCP product's target never changes (contract mcp-access §3.3): a copy holds.
          row.mcp_target = mcpTargetColumn({
            kind: product.target_kind,
            name: product.target_name,
          });
          if (key.approval && row.mcp_target !== null) {
            assertTierOffered(product, productRef, row.plan_tier);
          }
          await trx<KeyRow>(KEYS_TABLE).insert(row);
          if (key.approval?.secret !== undefined) {
            await this.secrets.insert(trx, row, key.approval.secret);
          }
        });
        return keyFromRow(row);
      } catch (error) {
        if (classifyDatabaseError(error) !== 'unique-violation') {
          throw mapDatabaseError(error, { missingReference: missingProduct });
        }
        if (!key.approval && (await this.hasPendingDuplicate(row))) {
          throw new ConflictError(
            `${row.requested_by} already has a Pending request for API product ${refText(productRef)} with plan tier ${row.plan_tier}`,
          );
        }
        // Otherwise the generated name collided with an existing key: draw again.
        if (attempt >= KEY_NAME_ATTEMPTS) {
          throw mapDatabaseError(error, {
            conflict: `Could not generate a unique name for a key of ${refText(productRef)}; retry`,
          });
        }
      }
    }
  }

  private async hasPendingDuplicate(row: KeyRow): Promise<boolean> {
    try {
      const duplicate = await this.db<KeyRow>(KEYS_TABLE)
        .where({
          namespace: row.namespace,
          product_name: row.product_name,
          requested_by: row.requested_by,
          plan_tier: row.plan_tier,
          phase: 'Pending',
        })
        .whereNot('name', row.name)
        .first('name');
      return duplicate !== undefined;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.getKey`. */
  async getKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    try {
      const row: KeyRow | undefined = await this.db(KEYS_TABLE)
        .select(KEY_COLUMNS)
        .where({ namespace: ref.namespace, name: ref.name })
        .first();
      return row ? keyFromRow(row) : undefined;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.listKeys`. */
  async listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    const parts = this.keyQueries(filter);
    try {
      const rows: KeyRow[] =
        parts.length === 1
          ? await parts[0].orderBy(['k.namespace', 'k.name'])
          : await this.db
              .select<KeyRow[]>('*')
              .from(parts[0].unionAll(parts[1]).as('owned'))
              .orderBy(['namespace', 'name']);
      return rows.map(keyFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.listKeysPage`. */
  async listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>> {
    const parts = this.keyQueries(filter);
    const after = cursorPosition(page);
    try {
      let rows: KeyRow[];
      if (parts.length === 1) {
        rows = await pageQuery(parts[0], 'k.', after, page.limit);
      } else {
        // Each half is a keyset page of its own (an index range, `limit + 1` rows at
        // most); the page is the first `limit + 1` of both, so the cost follows the page
        // size, not the table or the position.
        const [first, second] = parts.map((part, index) =>
          this.db.select('*').from(pageQuery(part, 'k.', after, page.limit).as(`half${index}`)),
        );
        rows = await pageQuery(
          this.db.select('*').from(first.unionAll(second).as('owned')),
          '',
          undefined,
          page.limit,
        );
      }
      return pageOf(rows, page.limit, keyFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /**
   * The key queries of a filter: one, or for an ownership filter two disjoint
   * index-driven halves (by requester; by products whose owner is one of the caller's
   * refs) instead of one OR that would scan every key.
   */
  private keyQueries(filter: KeyFilter): Knex.QueryBuilder[] {
    if (filter.productName !== undefined && filter.namespace === undefined) {
      throw new InputError('A key filter by product name needs the namespace');
    }
    const filtered = () => {
      const query = this.db(`${KEYS_TABLE} as k`).select(KEY_COLUMNS.map(column => `k.${column}`));
      if (filter.namespace !== undefined) {
        query.where('k.namespace', filter.namespace);
      }
      if (filter.phase !== undefined) {
        query.where('k.phase', filter.phase);
      }
      if (filter.productName !== undefined) {
        query.where('k.product_name', filter.productName);
      }
      if (filter.requestedBy !== undefined) {
        query.where('k.requested_by', filter.requestedBy);
      }
      const productOwners = filter.productOwnerRefs;
      if (productOwners !== undefined) {
        // A semi-join on the products' primary key (no second alias for the owner half's join).
        query.whereExists(
          this.db(`${PRODUCTS_TABLE} as po`)
            .select(this.db.raw('1'))
            .whereRaw('?? = ??', ['po.namespace', 'k.namespace'])
            .whereRaw('?? = ??', ['po.name', 'k.product_name'])
            .whereIn('po.owner', productOwners),
        );
      }
      return query;
    };
    if (filter.ownedBy === undefined) {
      return [filtered()];
    }
    const { userRef, ownershipRefs } = filter.ownedBy;
    // The second half excludes the first's rows, so UNION ALL needs no deduplication.
    const asRequester = filtered().where('k.requested_by', userRef);
    const asProductOwner = filtered()
      .join(`${PRODUCTS_TABLE} as p`, join =>
        join.on('p.namespace', '=', 'k.namespace').andOn('p.name', '=', 'k.product_name'),
      )
      .whereIn('p.owner', ownershipRefs)
      .whereNot('k.requested_by', userRef);
    return [asRequester, asProductOwner];
  }

  /** See `PortalStore.updatePendingKey`. */
  async updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey> {
    const changes: Partial<Record<keyof KeyRow, unknown>> = {};
    if (update.planTier !== undefined) {
      changes.plan_tier = update.planTier;
    }
    if (update.useCase !== undefined) {
      changes.use_case = update.useCase;
    }
    if (update.expiresAt !== undefined) {
      changes.expires_at = update.expiresAt;
    }
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name, phase: 'Pending' })
          .update({
            ...changes,
            resource_version: trx.raw('resource_version + 1'),
          });
        return this.readAfterTransition(trx, ref, updated, 'Pending', 'edited');
      });
    } catch (error) {
      throw mapDatabaseError(error, {
        conflict: `The requester already has a Pending request for this API product with plan tier ${update.planTier}`,
      });
    }
  }

  /** See `PortalStore.reviewKey`. */
  async reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey> {
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx<KeyRow>(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name, phase: 'Pending' })
          .update({
            phase: review.phase,
            reviewed_by: review.reviewedBy,
            reviewed_at: nowTimestamp(),
            reason: review.reason ?? null,
            resource_version: trx.raw('resource_version + 1'),
          });
        if (updated === 1 && review.phase === 'Approved') {
          await this.assertAccessRequestTierOffered(trx, ref);
          if (review.secret !== undefined) await this.secrets.insert(trx, ref, review.secret);
        }
        const verb = review.phase === 'Approved' ? 'approved' : 'rejected';
        return this.readAfterTransition(trx, ref, updated, 'Pending', verb);
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /**
   * For an access request (ConflictError otherwise): its product still offers its tier, read
   * under the product row's lock (see the comment at the top of this file). Called after the
   * key's own update, so the key is locked first, as a product delete locks it.
   */
  private async assertAccessRequestTierOffered(
    trx: Knex.Transaction,
    ref: ObjectRef,
  ): Promise<void> {
    const key: Pick<KeyRow, 'product_name' | 'plan_tier' | 'mcp_target'> | undefined = await trx(
      KEYS_TABLE,
    )
      .where({ namespace: ref.namespace, name: ref.name })
      .first('product_name', 'plan_tier', 'mcp_target');
    if (key === undefined || key.mcp_target === null) return;
    const productRef = { namespace: ref.namespace, name: key.product_name };
    const product: Pick<ProductRow, 'spec'> | undefined = await trx(PRODUCTS_TABLE)
      .where(productRef)
      .forShare()
      .first('spec');
    if (product !== undefined) assertTierOffered(product, productRef, key.plan_tier);
  }

  /** See `PortalStore.deleteKey`. */
  async deleteKey(ref: ObjectRef): Promise<void> {
    try {
      await this.db.transaction(async trx => {
        // Key first: it waits for a concurrent approval, whose secret the FK cascade
        // then removes; the explicit secret delete covers a database without FKs.
        const deleted = await trx<KeyRow>(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name })
          .delete();
        await this.secrets.deleteOfKey(trx, ref);
        if (deleted === 0) {
          throw new NotFoundError(`API key ${refText(ref)} not found`);
        }
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.claimExpiryAnnouncements` and the comment at the top of this file. */
  async claimExpiryAnnouncements(now: Date, limit: number): Promise<ApiKey[]> {
    const claimedAt = nowTimestamp();
    try {
      const candidates: KeyRow[] = await this.db(KEYS_TABLE)
        .select(KEY_COLUMNS)
        .where('phase', 'Approved')
        .whereNull('expiry_announced_at')
        .whereNotNull('expires_at')
        .where('expires_at', '<=', dueExpiryTextBound(now))
        .orderBy(['expires_at', 'namespace', 'name']);
      const claimed: ApiKey[] = [];
      for (const row of candidates) {
        if (claimed.length >= limit) break;
        if (!isExpiryDue(row.expires_at, now)) continue;
        const updated = await this.db(KEYS_TABLE)
          .where({ namespace: row.namespace, name: row.name, phase: 'Approved' })
          .whereNull('expiry_announced_at')
          .update({ expiry_announced_at: claimedAt });
        if (updated === 1) claimed.push(keyFromRow(row));
      }
      return claimed;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /**
   * The key after a compare-and-set on its phase: the new state when the update hit a
   * row, otherwise NotFoundError or a ConflictError naming the current phase.
   */
  private async readAfterTransition(
    trx: Knex.Transaction,
    ref: ObjectRef,
    updated: number,
    expectedPhase: string,
    verb: string,
  ): Promise<ApiKey> {
    const row: KeyRow | undefined = await trx(KEYS_TABLE)
      .select(KEY_COLUMNS)
      .where({ namespace: ref.namespace, name: ref.name })
      .first();
    if (!row) {
      throw new NotFoundError(`API key ${refText(ref)} not found`);
    }
    if (updated === 0) {
      throw new ConflictError(
        `API key ${refText(ref)} is ${row.phase}, not ${expectedPhase}: it can no longer be ${verb}`,
      );
    }
    return keyFromRow(row);
  }
}

/** ConflictError unless the stored product's spec offers `tier`. */
function assertTierOffered(product: Pick<ProductRow, 'spec'>, ref: ObjectRef, tier: string): void {
  if (!offeredTiers(JSON.parse(product.spec)).includes(tier)) {
    throw tierNotOfferedError(ref, tier);
  }
}
