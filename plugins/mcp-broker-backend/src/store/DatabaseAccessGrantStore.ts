/*
 * The AccessGrantStore on the plugin's database (src/grants/AccessGrantStore.ts,
 * migrations/20261206000000_access_grants.js). Every write is one transaction that first bumps
 * the feed row's revision — the row lock serialises writers until commit, so revisions commit in
 * order — then compares what it is given with the stored rows and writes only the rows that
 * differ, each with the new revision. A write that changes nothing rolls back (the revision is
 * not spent). On PostgreSQL the transaction also runs `pg_notify('mcp_broker_access_grants',
 * <revision>)`, delivered at commit (never before the rows are visible), and `listen` subscribes
 * to that channel on the replica's one listening connection (PostgresNotifications.ts, shared
 * with the signal bus), so every replica's index reads a change as soon as it commits. Without
 * that connection (SQLite, or `mcpBroker.signalNotifications: false`) `listen` answers
 * undefined and the indexes poll.
 */
import type { Knex } from 'knex';
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';
import type {
  AccessGrantStore,
  GrantFeedListener,
  GrantFeedSubscription,
  GrantWriteResult,
  StoredAccessGrant,
} from '../grants/AccessGrantStore';
import { chunksOf } from './DatabaseClientSessionStore';
import { isPostgres } from './isPostgres';
import type { PostgresNotifications } from './PostgresNotifications';

/** Table of the grants and tombstones (see migrations/). */
export const ACCESS_GRANTS_TABLE = 'mcp_broker_access_grants';
/** The one-row table of the feed's revision (see migrations/). */
export const ACCESS_GRANT_FEED_TABLE = 'mcp_broker_access_grant_feed';
/** The PostgreSQL notification channel of grant changes (the payload: the revision). */
export const ACCESS_GRANTS_CHANNEL = 'mcp_broker_access_grants';

interface GrantRow {
  id: string;
  group_ref: string;
  subject: string;
  target_kind: string;
  target_name: string;
  title: string;
  plan: string;
  limits: string;
  links: string | null;
  approved_at: string | number;
  expires_at: string | number | null;
  removed_at: string | number | null;
  revision: string | number;
}

/** The row of a live grant, without its revision (to compare with the stored one). */
function liveRow(grant: McpAccessGrant) {
  return {
    id: grant.id,
    group_ref: grant.group,
    subject: grant.subject.toLocaleLowerCase('en-US'),
    target_kind: grant.target.kind,
    target_name: grant.target.name,
    title: grant.title,
    plan: grant.plan,
    limits: JSON.stringify(grant.limits),
    links: grant.links === undefined ? null : JSON.stringify(grant.links),
    approved_at: grant.approvedAt,
    expires_at: grant.expiresAt ?? null,
    removed_at: null,
  };
}

type LiveRow = ReturnType<typeof liveRow>;

/** Whether the stored row already says what `wanted` says (bigints come back as strings). */
function sameRow(stored: GrantRow, wanted: LiveRow): boolean {
  return (Object.keys(wanted) as Array<keyof LiveRow>).every(key => {
    const a = stored[key];
    const b = wanted[key];
    if (a === null || b === null) return a === b;
    return String(a) === String(b);
  });
}

function fromRow(row: GrantRow): StoredAccessGrant {
  return {
    id: row.id,
    group: row.group_ref,
    subject: row.subject,
    target: { kind: row.target_kind as 'server' | 'endpoint', name: row.target_name },
    title: row.title,
    plan: row.plan,
    limits: JSON.parse(row.limits),
    ...(row.links === null ? {} : { links: JSON.parse(row.links) }),
    approvedAt: Number(row.approved_at),
    ...(row.expires_at === null ? {} : { expiresAt: Number(row.expires_at) }),
    ...(row.removed_at === null ? {} : { removedAt: Number(row.removed_at) }),
    revision: Number(row.revision),
  };
}

/** A write's changes, decided inside its transaction from the stored rows. */
interface Changes {
  upserts: LiveRow[];
  removals: string[];
}

/** Options of {@link DatabaseAccessGrantStore}. */
export interface DatabaseAccessGrantStoreOptions {
  /**
   * The replica's listening connection on PostgreSQL (absent: `listen` answers undefined and
   * the index polls).
   */
  notifications?: PostgresNotifications;
}

/** {@link AccessGrantStore} shared by every replica through the plugin's database. */
export class DatabaseAccessGrantStore implements AccessGrantStore {
  constructor(
    private readonly knex: Knex,
    private readonly options: DatabaseAccessGrantStoreOptions = {},
  ) {}

  listen(listener: GrantFeedListener): GrantFeedSubscription | undefined {
    return this.options.notifications?.subscribe(ACCESS_GRANTS_CHANNEL, {
      notified: () => listener.changed(),
      listening: () => listener.listening(),
      lost: error => listener.lost(error),
    });
  }

  upsert(grants: readonly McpAccessGrant[]): Promise<GrantWriteResult> {
    return this.write(async trx => ({
      upserts: await this.changedUpserts(trx, grants),
      removals: [],
    }));
  }

  remove(ids: readonly string[]): Promise<GrantWriteResult> {
    return this.write(async trx => ({ upserts: [], removals: await this.liveIds(trx, ids) }));
  }

  replaceGroup(group: string, grants: readonly McpAccessGrant[]): Promise<GrantWriteResult> {
    return this.write(async trx => {
      const kept = new Set(grants.map(grant => grant.id));
      const live: string[] = await trx(ACCESS_GRANTS_TABLE)
        .where({ group_ref: group })
        .whereNull('removed_at')
        .pluck('id');
      return {
        upserts: await this.changedUpserts(trx, grants),
        removals: live.filter(id => !kept.has(id)),
      };
    });
  }

  removeGroup(group: string): Promise<GrantWriteResult> {
    return this.write(async trx => ({
      upserts: [],
      removals: await trx(ACCESS_GRANTS_TABLE)
        .where({ group_ref: group })
        .whereNull('removed_at')
        .pluck('id'),
    }));
  }

  syncSource(
    source: string,
    grants: readonly McpAccessGrant[],
    since: number,
  ): Promise<GrantWriteResult> {
    return this.write(async trx => {
      const listed = new Set(grants.map(grant => grant.id));
      const rows: Array<Pick<GrantRow, 'id' | 'removed_at' | 'revision'>> = await trx(
        ACCESS_GRANTS_TABLE,
      )
        .where('id', 'like', `${source}:%`)
        .select('id', 'removed_at', 'revision');
      // Rows a delta wrote after the walk began are fresher than the walk: left alone.
      const newer = new Set(rows.filter(row => Number(row.revision) > since).map(row => row.id));
      return {
        upserts: await this.changedUpserts(
          trx,
          grants.filter(grant => !newer.has(grant.id)),
        ),
        removals: rows
          .filter(row => row.removed_at === null && !newer.has(row.id) && !listed.has(row.id))
          .map(row => row.id),
      };
    });
  }

  async revision(): Promise<number> {
    const feed = await this.knex(ACCESS_GRANT_FEED_TABLE).where({ id: 'feed' }).first('revision');
    return Number(feed?.revision ?? 0);
  }

  async readSince(revision: number) {
    // The feed row first, then the rows up to its revision: a grant row and the feed's revision
    // commit together, so every row up to the revision read is visible, and a write committing
    // between the two reads is left for the next read instead of being skipped.
    const feed = await this.knex(ACCESS_GRANT_FEED_TABLE).where({ id: 'feed' }).first();
    const current = Number(feed?.revision ?? 0);
    const rows: GrantRow[] = await this.knex(ACCESS_GRANTS_TABLE)
      .where('revision', '>', revision)
      .andWhere('revision', '<=', current)
      .orderBy('revision');
    return {
      changes: rows.map(fromRow),
      revision: current,
      sweptThrough: Number(feed?.swept_through ?? 0),
    };
  }

  async loadLive() {
    // As readSince: the revision first, then the rows current at it (a later write's rows, if
    // any are read too, are read again by the next readSince and applied once more, unchanged).
    const feed = await this.knex(ACCESS_GRANT_FEED_TABLE).where({ id: 'feed' }).first();
    const revision = Number(feed?.revision ?? 0);
    const rows: GrantRow[] = await this.knex(ACCESS_GRANTS_TABLE).whereNull('removed_at');
    return { grants: rows.map(fromRow), revision };
  }

  /**
   * One write: bumps the revision (serialising writers), lets `decide` read the stored rows and
   * say what changes, writes that with the new revision — or rolls back when nothing changes.
   */
  private async write(
    decide: (trx: Knex.Transaction) => Promise<Changes>,
  ): Promise<GrantWriteResult> {
    const nothing = new Error('nothing changed');
    try {
      return await this.knex.transaction(async trx => {
        await trx(ACCESS_GRANT_FEED_TABLE).where({ id: 'feed' }).increment('revision', 1);
        const feed = await trx(ACCESS_GRANT_FEED_TABLE).where({ id: 'feed' }).first('revision');
        const revision = Number(feed.revision);
        const { upserts, removals } = await decide(trx);
        if (upserts.length === 0 && removals.length === 0) throw nothing;
        for (const row of upserts) {
          await trx(ACCESS_GRANTS_TABLE)
            .insert({ ...row, revision })
            .onConflict('id')
            .merge();
        }
        const now = Date.now();
        for (const chunk of chunksOf(removals)) {
          await trx(ACCESS_GRANTS_TABLE).whereIn('id', chunk).update({ removed_at: now, revision });
        }
        if (isPostgres(trx)) {
          await trx.raw('SELECT pg_notify(?, ?)', [ACCESS_GRANTS_CHANNEL, String(revision)]);
        }
        return { revision };
      });
    } catch (error) {
      if (error === nothing) return undefined;
      throw error;
    }
  }

  /** The rows among `grants` that are new or differ from the stored ones; removed ids stay removed. */
  private async changedUpserts(
    trx: Knex.Transaction,
    grants: readonly McpAccessGrant[],
  ): Promise<LiveRow[]> {
    const stored = new Map<string, GrantRow>();
    for (const chunk of chunksOf(grants.map(grant => grant.id))) {
      const rows: GrantRow[] = await trx(ACCESS_GRANTS_TABLE).whereIn('id', chunk);
      for (const row of rows) stored.set(row.id, row);
    }
    const changed: LiveRow[] = [];
    for (const grant of grants) {
      const row = liveRow(grant);
      const existing = stored.get(grant.id);
      if (existing?.removed_at !== null && existing !== undefined) continue; // final
      if (existing !== undefined && sameRow(existing, row)) continue;
      changed.push(row);
    }
    return changed;
  }

  /** The ids among `ids` of live grants. */
  private async liveIds(trx: Knex.Transaction, ids: readonly string[]): Promise<string[]> {
    const live: string[] = [];
    for (const chunk of chunksOf(ids)) {
      live.push(
        ...(await trx(ACCESS_GRANTS_TABLE)
          .whereIn('id', chunk)
          .whereNull('removed_at')
          .pluck('id')),
      );
    }
    return live;
  }
}
