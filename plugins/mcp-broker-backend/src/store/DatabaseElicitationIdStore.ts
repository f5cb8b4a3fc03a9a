/*
 * The shared ElicitationIdStore on the plugin's database (PostgreSQL in production).
 *
 * Why the database and not Backstage's CacheService: the cache has get/set/delete but no
 * compare-and-set or get-and-delete, so two replicas could both read an id and both forward an
 * answer. Here a claim is one statement, `DELETE … WHERE gateway_id = ? AND client_session_id = ?
 * AND expires_at > ? RETURNING *`: PostgreSQL row locks (and SQLite's single writer) let exactly
 * one of any number of concurrent claims delete the row, and only that one gets the mapping. A
 * foreign or expired claim matches no row and changes nothing.
 */
import type { Knex } from 'knex';
import type { ElicitationIdStore, ElicitationMapping } from '../calls/ElicitationIdMap';

/** Table of elicitation gateway ids (see migrations/). */
export const ELICITATIONS_TABLE = 'mcp_broker_elicitations';

interface MappingRow {
  gateway_id: string;
  backend_request_id: string;
  backend: string;
  backend_session_id: string | null;
  protocol_version: string;
  client_session_id: string;
  call_id: string;
  expires_at: string | number;
  principal?: string | null;
  task_id?: string | null;
  backend_input_key?: string | null;
}

function toRow(mapping: ElicitationMapping): MappingRow {
  return {
    gateway_id: mapping.gatewayId,
    backend_request_id: mapping.backendRequestId,
    backend: mapping.backend,
    backend_session_id: mapping.backendSessionId ?? null,
    protocol_version: mapping.protocolVersion,
    client_session_id: mapping.clientSessionId,
    call_id: mapping.callId,
    expires_at: mapping.expiresAt,
    ...(mapping.task === undefined
      ? {}
      : {
          principal: mapping.task.principal,
          task_id: mapping.task.taskId,
          backend_input_key: mapping.task.backendInputKey,
        }),
  };
}

function fromRow(row: MappingRow): ElicitationMapping {
  return {
    gatewayId: row.gateway_id,
    backendRequestId: row.backend_request_id,
    backend: row.backend,
    backendSessionId: row.backend_session_id ?? undefined,
    protocolVersion: row.protocol_version,
    clientSessionId: row.client_session_id,
    callId: row.call_id,
    // PostgreSQL returns bigint columns as strings.
    expiresAt: Number(row.expires_at),
    ...(typeof row.task_id === 'string' && typeof row.backend_input_key === 'string'
      ? {
          task: {
            taskId: row.task_id,
            backendInputKey: row.backend_input_key,
            principal: row.principal ?? '',
          },
        }
      : {}),
  };
}

/** {@link ElicitationIdStore} shared by every replica through the plugin's database. */
export class DatabaseElicitationIdStore implements ElicitationIdStore {
  constructor(private readonly knex: Knex) {}

  async insert(mapping: ElicitationMapping): Promise<void> {
    await this.knex<MappingRow>(ELICITATIONS_TABLE).insert(toRow(mapping));
  }

  async claim(gatewayId: string, clientSessionId: string, now: number) {
    return this.deleteReturning(
      this.knex(ELICITATIONS_TABLE)
        .where({ gateway_id: gatewayId, client_session_id: clientSessionId })
        .andWhere('expires_at', '>', now),
    );
  }

  async take(gatewayId: string) {
    return this.deleteReturning(this.knex(ELICITATIONS_TABLE).where('gateway_id', gatewayId));
  }

  async peek(gatewayId: string) {
    const row = await this.knex<MappingRow>(ELICITATIONS_TABLE)
      .where('gateway_id', gatewayId)
      .first();
    return row === undefined ? undefined : fromRow(row);
  }

  async deleteByCall(callId: string) {
    await this.knex(ELICITATIONS_TABLE).where('call_id', callId).delete();
  }

  async deleteByClientSession(clientSessionId: string) {
    await this.knex(ELICITATIONS_TABLE).where('client_session_id', clientSessionId).delete();
  }

  async deleteExpired(now: number) {
    await this.knex(ELICITATIONS_TABLE).where('expires_at', '<=', now).delete();
  }

  /**
   * Runs the delete with `RETURNING *` and gives back the one deleted row. Raw SQL because
   * knex drops `.returning()` on deletes for SQLite, which supports the clause since 3.35.
   */
  private async deleteReturning(query: Knex.QueryBuilder): Promise<ElicitationMapping | undefined> {
    const { sql, bindings } = query.delete().toSQL();
    const result = await this.knex.raw(`${sql} returning *`, bindings);
    // pg answers { rows }, better-sqlite3 the row array itself.
    const rows: MappingRow[] = Array.isArray(result) ? result : result.rows;
    return rows.length === 1 ? fromRow(rows[0]) : undefined;
  }
}
