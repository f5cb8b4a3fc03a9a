/*
 * The shared TaskInputStore on the plugin's database: rows of `mcp_broker_elicitations` without
 * a client session, named by `task_id` and `principal`, the request in `request_json`
 * (migrations 20261212000000_task_inputs.js and 20261213000000_task_input_sessions.js). A claim is one `DELETE … WHERE gateway_id AND task_id
 * AND principal AND expires_at > now RETURNING *`, so of any number of concurrent claims on any
 * replica exactly one gets the row (as DatabaseElicitationIdStore's). A client session's claim
 * never matches such a row (its `client_session_id` is null), nor a task claim a session's row.
 */
import type { Knex } from 'knex';
import type { TaskInput, TaskInputStore } from '../tasks/TaskInputStore';
import { ELICITATIONS_TABLE } from './DatabaseElicitationIdStore';

interface TaskInputRow {
  gateway_id: string;
  backend_request_id: string;
  backend: string;
  backend_session_id: string | null;
  protocol_version: string;
  client_session_id: null;
  call_id: string;
  principal: string;
  task_id: string;
  request_json: string;
  expires_at: string | number;
}

function fromRow(row: TaskInputRow): TaskInput {
  return {
    gatewayId: row.gateway_id,
    taskId: row.task_id,
    principal: row.principal,
    server: row.backend,
    backendSessionId: row.backend_session_id ?? undefined,
    protocolVersion: row.protocol_version,
    backendRequestId: row.backend_request_id,
    request: JSON.parse(row.request_json),
    // PostgreSQL returns bigint columns as strings.
    expiresAt: Number(row.expires_at),
  };
}

/** {@link TaskInputStore} shared by every replica through the plugin's database. */
export class DatabaseTaskInputStore implements TaskInputStore {
  constructor(private readonly knex: Knex) {}

  async insert(input: TaskInput): Promise<void> {
    await this.knex<TaskInputRow>(ELICITATIONS_TABLE).insert({
      gateway_id: input.gatewayId,
      backend_request_id: input.backendRequestId,
      backend: input.server,
      backend_session_id: input.backendSessionId ?? null,
      protocol_version: input.protocolVersion,
      client_session_id: null,
      // The task's inputs are retired together with it: its id is too long for call_id.
      call_id: 'task-input',
      principal: input.principal,
      task_id: input.taskId,
      request_json: JSON.stringify(input.request),
      expires_at: input.expiresAt,
    });
  }

  async openOf(taskId: string, now: number): Promise<TaskInput[]> {
    const rows: TaskInputRow[] = await this.knex(ELICITATIONS_TABLE)
      .where('task_id', taskId)
      .whereNull('client_session_id')
      .andWhere('expires_at', '>', now);
    return rows.map(fromRow);
  }

  async claim(gatewayId: string, taskId: string, principal: string, now: number) {
    const { sql, bindings } = this.knex(ELICITATIONS_TABLE)
      .where({ gateway_id: gatewayId, task_id: taskId, principal })
      .whereNull('client_session_id')
      .andWhere('expires_at', '>', now)
      .delete()
      .toSQL();
    // Raw: knex drops `.returning()` on deletes for SQLite, which supports it since 3.35.
    const result = await this.knex.raw(`${sql} returning *`, bindings);
    const rows: TaskInputRow[] = Array.isArray(result) ? result : result.rows;
    return rows.length === 1 ? fromRow(rows[0]) : undefined;
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(ELICITATIONS_TABLE)
      .whereNull('client_session_id')
      .andWhere('expires_at', '<=', now)
      .delete();
  }
}
