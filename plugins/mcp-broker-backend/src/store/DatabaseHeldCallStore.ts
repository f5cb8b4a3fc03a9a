/*
 * The HeldCallStore on the plugin's database (see src/inputRequests/HeldCallStore.ts and
 * migrations/20261126000000_held_calls.js). A round is claimed with one conditional UPDATE
 * (`… WHERE call_id = ? AND resumption IS NULL AND expires_at > ?`): of concurrent claims exactly
 * one updates the row (PostgreSQL row locks, SQLite's single writer). A 2025 client's answer for
 * a call to a 2026-07-28 backend becomes a signal to the call, sent through the replicas' one
 * signal writer (DatabaseSignalStore.sendWhile) on the condition, checked in its statement, that
 * the call's round is still published; the call's signals are deleted through it too. Each round
 * names the replica holding it (`holder_replica`); the conditions above also require that
 * replica to be present (replicas/ReplicaPresence.ts), in the same statement.
 */
import type { Knex } from 'knex';
import type { HeldCallStore, HeldRound, RoundClaim } from '../inputRequests/HeldCallStore';
import { callAddress, relayAddressPrefix } from '../replicas/SignalBus';
import { DatabaseSignalStore } from './DatabaseSignalStore';
import { replicaGone } from './DatabaseReplicaPresenceStore';

/** Table of the current round of held calls (see migrations/). */
export const HELD_CALLS_TABLE = 'mcp_broker_held_calls';

interface RoundRow {
  call_id: string;
  round: number;
  backend: string;
  backend_session_id: string | null;
  protocol_version: string;
  asked: string;
  resumption: string | null;
  expires_at: string | number;
  holder_replica: string | null;
}

/** Options of {@link DatabaseHeldCallStore}. */
export interface DatabaseHeldCallStoreOptions {
  /** The signal store of the same database (the table's one writer); default a new one. */
  signals?: DatabaseSignalStore;
  /**
   * This replica's presence id (replicas/ReplicaPresence.ts), recorded with the rounds it
   * publishes; without it its rounds never count as held by a gone replica.
   */
  replicaId?: string;
}

const GONE_HOLDER = `${HELD_CALLS_TABLE}.holder_replica`;

function fromRow(row: RoundRow): HeldRound {
  return {
    callId: row.call_id,
    round: Number(row.round),
    backend: row.backend,
    ...(row.backend_session_id === null ? {} : { backendSessionId: row.backend_session_id }),
    protocolVersion: row.protocol_version,
    asked: JSON.parse(row.asked),
    // PostgreSQL returns bigint columns as strings.
    expiresAt: Number(row.expires_at),
  };
}

/** {@link HeldCallStore} shared by every replica through the plugin's database. */
export class DatabaseHeldCallStore implements HeldCallStore {
  private readonly signals: DatabaseSignalStore;

  constructor(
    private readonly knex: Knex,
    private readonly options: DatabaseHeldCallStoreOptions = {},
  ) {
    this.signals = options.signals ?? new DatabaseSignalStore(knex);
  }

  async publishRound(round: HeldRound): Promise<void> {
    const row = {
      call_id: round.callId,
      round: round.round,
      backend: round.backend,
      backend_session_id: round.backendSessionId ?? null,
      protocol_version: round.protocolVersion,
      asked: JSON.stringify(round.asked),
      resumption: null,
      expires_at: round.expiresAt,
      holder_replica: this.options.replicaId ?? null,
    };
    await this.knex(HELD_CALLS_TABLE).insert(row).onConflict('call_id').merge();
  }

  async claimRound(
    callId: string,
    claim: RoundClaim,
    now: number,
    keepUntil: number,
  ): Promise<HeldRound | 'holder-gone' | undefined> {
    const gone = replicaGone(GONE_HOLDER, now);
    const updated = await this.knex(HELD_CALLS_TABLE)
      .where({ call_id: callId })
      .whereNull('resumption')
      .andWhere('expires_at', '>', now)
      .andWhereRaw(`not ${gone.sql}`, gone.bindings)
      .update({ resumption: JSON.stringify(claim), expires_at: keepUntil });
    if (updated !== 1) return (await this.holderGone(callId, now)) ? 'holder-gone' : undefined;
    const row: RoundRow | undefined = await this.knex(HELD_CALLS_TABLE)
      .where({ call_id: callId })
      .first();
    return row === undefined ? undefined : fromRow(row);
  }

  async holderGone(callId: string, now: number): Promise<boolean> {
    const gone = replicaGone(GONE_HOLDER, now);
    const row = await this.knex(HELD_CALLS_TABLE)
      .where({ call_id: callId })
      .andWhereRaw(gone.sql, gone.bindings)
      .first('call_id');
    return row !== undefined;
  }

  async claimOf(callId: string, round: number): Promise<RoundClaim | undefined> {
    const row: Pick<RoundRow, 'resumption'> | undefined = await this.knex(HELD_CALLS_TABLE)
      .where({ call_id: callId, round })
      .first('resumption');
    return row?.resumption ? JSON.parse(row.resumption) : undefined;
  }

  async deliverAnswer(
    callId: string,
    message: string,
    now: number,
    expiresAt: number,
  ): Promise<boolean> {
    // One statement: the check that the round is still published (by a present holder) and the
    // insert cannot be split by the holder deleting the round.
    const gone = replicaGone(GONE_HOLDER, now);
    return this.signals.sendWhile(
      { address: callAddress(callId), kind: 'answer', payload: message },
      expiresAt,
      {
        sql: `exists (select 1 from ?? where call_id = ? and expires_at > ? and not ${gone.sql})`,
        bindings: [HELD_CALLS_TABLE, callId, now, ...gone.bindings],
      },
    );
  }

  async deleteCall(callId: string): Promise<void> {
    // The round first: from then on no answer is handed over (deliverAnswer checks it).
    await this.knex(HELD_CALLS_TABLE).where({ call_id: callId }).delete();
    await this.signals.discard(callAddress(callId), relayAddressPrefix(callId));
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(HELD_CALLS_TABLE).where('expires_at', '<=', now).delete();
  }
}
