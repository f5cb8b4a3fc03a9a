/*
 * The replicas' presence marks (src/replicas/ReplicaPresence.ts) in the plugin's database, table
 * `mcp_broker_replicas` (migrations/20261201000000_rate_limits.js): one row per replica, alive
 * until `alive_until`. Also the one SQL condition the other stores use to take over what a gone
 * replica held, in the same statement as the take-over.
 */
import type { Knex } from 'knex';
import type { ReplicaPresenceStore } from '../replicas/ReplicaPresence';

/** Replica presence marks (see migrations/). */
export const REPLICAS_TABLE = 'mcp_broker_replicas';

/** {@link ReplicaPresenceStore} shared by every replica through the plugin's database. */
export class DatabaseReplicaPresenceStore implements ReplicaPresenceStore {
  constructor(private readonly knex: Knex) {}

  async beat(replicaId: string, aliveUntil: number, now: number): Promise<void> {
    await this.knex(REPLICAS_TABLE)
      .insert({ replica_id: replicaId, alive_until: aliveUntil })
      .onConflict('replica_id')
      .merge(['alive_until']);
    await this.knex(REPLICAS_TABLE).where('alive_until', '<=', now).delete();
  }

  async leave(replicaId: string): Promise<void> {
    await this.knex(REPLICAS_TABLE).where('replica_id', replicaId).delete();
  }
}

/**
 * An SQL condition: the replica named in `column` (qualified, e.g. `table.stream_replica`) is
 * gone at `now` — named (not null) and without a current presence mark. A null column (a row of
 * a replica of an earlier version) never counts as gone. For `whereRaw(sql, bindings)`, or to be
 * embedded in a larger condition.
 */
export function replicaGone(
  column: string,
  now: number,
): { sql: string; bindings: Knex.RawBinding[] } {
  return {
    sql: `(?? is not null and not exists (select 1 from ?? where ??.replica_id = ?? and ??.alive_until > ?))`,
    bindings: [column, REPLICAS_TABLE, REPLICAS_TABLE, column, REPLICAS_TABLE, now],
  };
}
