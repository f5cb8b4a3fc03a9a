/*
 * The shared ClientSessionStore on the plugin's database (PostgreSQL in production). Every
 * statement is a single keyed statement; `extend` only moves an unexpired expiry forwards
 * (`UPDATE … WHERE expires_at > now AND expires_at < new`), so an expired or deleted session is
 * never revived by a late touch from another replica. The stream lease is taken with one
 * conditional `UPDATE … WHERE id = ? AND expires_at > now AND (no holder OR lease expired OR
 * the holding replica is gone)`, so of two replicas opening a GET stream for one session at once
 * exactly one gets it, and a replica that died (no presence mark, replicas/ReplicaPresence.ts)
 * blocks its sessions' streams only until its mark lapses, not for the whole lease. The
 * per-principal limit is counted and the new session inserted in one transaction, under a
 * PostgreSQL advisory lock keyed by the principal, so replicas racing `initialize` for one
 * principal never overshoot it.
 */
import type { Knex } from 'knex';
import { lockKeyOnPostgres } from './lockKeyOnPostgres';
import { replicaGone } from './DatabaseReplicaPresenceStore';
import type { ClientSessionStore, StoredClientSession } from '../sessions/ClientSessionStore';

/** Table of client sessions (see migrations/). */
export const CLIENT_SESSIONS_TABLE = 'mcp_broker_client_sessions';

interface SessionRow {
  id: string;
  principal: string;
  protocol_version: string;
  client_capabilities: string;
  client_info: string | null;
  endpoint: string | null;
  expires_at: string | number;
  stream_holder: string | null;
  stream_lease_expires_at: string | number | null;
  stream_replica: string | null;
}

/** Options of {@link DatabaseClientSessionStore}. */
export interface DatabaseClientSessionStoreOptions {
  /**
   * This replica's presence id (replicas/ReplicaPresence.ts), recorded with the stream leases it
   * takes; without it its leases are never taken over before they lapse.
   */
  replicaId?: string;
}

/** Ids per statement: well below SQLite's and PostgreSQL's bound-parameter limits. */
const IDS_PER_STATEMENT = 500;

/** `ids` in chunks of at most {@link IDS_PER_STATEMENT} (one statement each). */
export function chunksOf<T>(ids: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT)
    chunks.push(ids.slice(i, i + IDS_PER_STATEMENT));
  return chunks;
}

function sessionRow(session: StoredClientSession) {
  return {
    id: session.id,
    principal: session.principal,
    protocol_version: session.protocolVersion,
    client_capabilities: JSON.stringify(session.clientCapabilities),
    client_info: session.clientInfo === undefined ? null : JSON.stringify(session.clientInfo),
    endpoint: session.endpoint ?? null,
    expires_at: session.expiresAt,
  };
}

/** How many unexpired sessions `principal` has at `now` (in a transaction, or not). */
async function countLiveOf(db: Knex, principal: string, now: number): Promise<number> {
  const [row] = await db<SessionRow>(CLIENT_SESSIONS_TABLE)
    .where('principal', principal)
    .andWhere('expires_at', '>', now)
    .count({ count: '*' });
  return Number(row?.count ?? 0);
}

/** {@link ClientSessionStore} shared by every replica through the plugin's database. */
export class DatabaseClientSessionStore implements ClientSessionStore {
  constructor(
    private readonly knex: Knex,
    private readonly options: DatabaseClientSessionStoreOptions = {},
  ) {}

  async insert(session: StoredClientSession): Promise<void> {
    await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE).insert(sessionRow(session));
  }

  async insertWithinLimit(
    session: StoredClientSession,
    max: number,
    now: number,
  ): Promise<boolean> {
    return this.knex.transaction(async trx => {
      // Serialises the count and the insert of one principal's sessions across replicas.
      await lockKeyOnPostgres(trx, session.principal);
      if ((await countLiveOf(trx, session.principal, now)) >= max) return false;
      await trx<SessionRow>(CLIENT_SESSIONS_TABLE).insert(sessionRow(session));
      return true;
    });
  }

  async get(id: string, now: number): Promise<StoredClientSession | undefined> {
    const row = await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
      .where('id', id)
      .andWhere('expires_at', '>', now)
      .first();
    if (row === undefined) return undefined;
    return {
      id: row.id,
      principal: row.principal,
      protocolVersion: row.protocol_version,
      clientCapabilities: JSON.parse(row.client_capabilities),
      clientInfo: row.client_info === null ? undefined : JSON.parse(row.client_info),
      ...(row.endpoint === null ? {} : { endpoint: row.endpoint }),
      expiresAt: Number(row.expires_at),
    };
  }

  async extend(ids: readonly string[], expiresAt: number, now: number): Promise<void> {
    for (const chunk of chunksOf(ids)) {
      await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
        .whereIn('id', chunk)
        .andWhere('expires_at', '>', now)
        .andWhere('expires_at', '<', expiresAt)
        .update({ expires_at: expiresAt });
    }
  }

  async countLive(principal: string, now: number): Promise<number> {
    return countLiveOf(this.knex, principal, now);
  }

  async liveIds(ids: readonly string[], now: number): Promise<Set<string>> {
    const live = new Set<string>();
    for (const chunk of chunksOf(ids)) {
      const rows = await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
        .whereIn('id', chunk)
        .andWhere('expires_at', '>', now)
        .select('id');
      for (const row of rows) live.add(row.id);
    }
    return live;
  }

  async acquireStreamLease(
    id: string,
    holder: string,
    leaseExpiresAt: number,
    now: number,
  ): Promise<boolean> {
    const updated = await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
      .where('id', id)
      .andWhere('expires_at', '>', now)
      .andWhere(free =>
        free
          .whereNull('stream_holder')
          .orWhere('stream_lease_expires_at', '<=', now)
          .orWhere(gone => {
            const { sql, bindings } = replicaGone(`${CLIENT_SESSIONS_TABLE}.stream_replica`, now);
            gone.whereRaw(sql, bindings);
          }),
      )
      .update({
        stream_holder: holder,
        stream_lease_expires_at: leaseExpiresAt,
        stream_replica: this.options.replicaId ?? null,
      });
    return updated === 1;
  }

  async renewStreamLeases(holders: readonly string[], leaseExpiresAt: number): Promise<string[]> {
    const lost = new Set(holders);
    for (const chunk of chunksOf(holders)) {
      await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
        .whereIn('stream_holder', chunk)
        .update({ stream_lease_expires_at: leaseExpiresAt });
      const held = await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
        .whereIn('stream_holder', chunk)
        .pluck('stream_holder');
      for (const holder of held) lost.delete(holder as string);
    }
    return [...lost];
  }

  async releaseStreamLease(id: string, holder: string): Promise<void> {
    await this.knex<SessionRow>(CLIENT_SESSIONS_TABLE)
      .where({ id, stream_holder: holder })
      .update({ stream_holder: null, stream_lease_expires_at: null, stream_replica: null });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.knex(CLIENT_SESSIONS_TABLE).where('id', id).delete()) > 0;
  }

  async deleteExpired(now: number): Promise<number> {
    return this.knex(CLIENT_SESSIONS_TABLE).where('expires_at', '<=', now).delete();
  }
}
