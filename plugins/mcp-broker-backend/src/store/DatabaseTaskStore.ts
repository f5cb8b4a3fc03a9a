/*
 * The shared TaskStore on the plugin's database (docs/contracts/tasks-and-apps.md §2.4–§2.6).
 *
 * Exactness of the per-person bound: the count of a person's open tasks and the insert of the new
 * slot run in one transaction under the person's advisory lock on PostgreSQL
 * (lockKeyOnPostgres.ts, as sessions are counted); SQLite has one writer at a time. The retention
 * bound is applied in the same transaction. Observations are compare-and-set on `version`
 * (`UPDATE … WHERE task_id = ? AND version = ?`): of two replicas that saw the same change, one
 * writes it. The watcher's lease is the same kind of conditional write (contract §2.10): one
 * `UPDATE` that succeeds only while the lease is free, the caller's, or lapsed. Activating a slot is conditional on it still being `pending`, so a slot swept
 * meanwhile never turns into an id the broker would hand out without a row.
 */
import type { Knex } from 'knex';
import { isPostgres } from './isPostgres';
import { lockKeyOnPostgres } from './lockKeyOnPostgres';
import {
  OPEN_TASK_STATUSES,
  type StoredTask,
  type StoredTaskStatus,
  type TaskBounds,
  type TaskListPosition,
  type TaskSlot,
  type TaskActivation,
  type TaskState,
  type TaskStore,
  WATCHED_TASK_STATUSES,
  type UnpinnedBackendSession,
} from '../tasks/TaskStore';
import { stateFields, trimRetained } from '../tasks/taskRows';

/** Table of tasks (see migrations/). */
export const TASKS_TABLE = 'mcp_broker_tasks';

/** Most people named in one query for unwatched tasks. */
const PRINCIPALS_PER_QUERY = 500;

interface TaskRow {
  task_id: string;
  principal: string;
  server: string;
  server_identity: string;
  tool: string;
  tool_annotations: string | null;
  credential_mode: string;
  backend_era: string;
  backend_task_id: string | null;
  backend_session_id: string | null;
  status: string;
  status_message: string | null;
  created_at: string | null;
  last_updated_at: string | null;
  ttl_ms: string | number | null;
  poll_interval_ms: number | null;
  recorded_at: string | number;
  expires_at: string | number;
  version: number;
  creating_trace: string | null;
  held_result: string | null;
}

const optional = <T>(value: T | null): T | undefined => value ?? undefined;
// PostgreSQL returns bigint columns as strings.
const optionalNumber = (value: string | number | null) =>
  value === null ? undefined : Number(value);

function fromRow(row: TaskRow): StoredTask {
  return {
    taskId: row.task_id,
    principal: row.principal,
    server: row.server,
    serverIdentity: row.server_identity,
    tool: row.tool,
    toolAnnotations: optional(row.tool_annotations),
    credentialMode: row.credential_mode,
    backendEra: row.backend_era === 'modern' ? 'modern' : 'legacy',
    creatingTrace: optional(row.creating_trace),
    status: row.status as StoredTaskStatus,
    statusMessage: optional(row.status_message),
    createdAt: optional(row.created_at),
    lastUpdatedAt: optional(row.last_updated_at),
    ttlMs: optionalNumber(row.ttl_ms),
    pollIntervalMs: optionalNumber(row.poll_interval_ms),
    backendTaskId: optional(row.backend_task_id),
    backendSessionId: optional(row.backend_session_id),
    heldResult: optional(row.held_result),
    recordedAt: Number(row.recorded_at),
    expiresAt: Number(row.expires_at),
    version: row.version,
  };
}

/** The columns an observation writes. */
function stateColumns(recordedAt: number, state: TaskState) {
  const fields = stateFields(recordedAt, state);
  return {
    status: fields.status,
    status_message: fields.statusMessage ?? null,
    created_at: fields.createdAt ?? null,
    last_updated_at: fields.lastUpdatedAt ?? null,
    ttl_ms: fields.ttlMs,
    poll_interval_ms: fields.pollIntervalMs ?? null,
    expires_at: fields.expiresAt,
  };
}

/** How many unexpired open tasks `principal` has at `now` (in a transaction, or not). */
async function countOpenOf(db: Knex, principal: string, now: number): Promise<number> {
  const [row] = await db(TASKS_TABLE)
    .where('principal', principal)
    .whereIn('status', OPEN_TASK_STATUSES)
    .andWhere('expires_at', '>', now)
    .count({ count: '*' });
  return Number(row?.count ?? 0);
}

/** {@link TaskStore} shared by every replica through the plugin's database. */
export class DatabaseTaskStore implements TaskStore {
  constructor(private readonly knex: Knex) {}

  async reserve(slot: TaskSlot, bounds: TaskBounds, now: number, expiresAt: number) {
    return this.knex.transaction(async trx => {
      // Serialises the count and the insert of one person's tasks across replicas.
      await lockKeyOnPostgres(trx, `tasks:${slot.principal}`);
      if ((await countOpenOf(trx, slot.principal, now)) >= bounds.perPerson) return false;
      await trx(TASKS_TABLE).insert({
        task_id: slot.taskId,
        principal: slot.principal,
        server: slot.server,
        server_identity: slot.serverIdentity,
        tool: slot.tool,
        tool_annotations: slot.toolAnnotations ?? null,
        credential_mode: slot.credentialMode,
        backend_era: slot.backendEra,
        creating_trace: slot.creatingTrace ?? null,
        status: 'pending',
        recorded_at: now,
        expires_at: expiresAt,
        version: 0,
      });
      const rows = await trx<TaskRow>(TASKS_TABLE)
        .where('principal', slot.principal)
        .select('task_id', 'status', 'recorded_at');
      const drop = trimRetained(
        rows.map(row => ({
          taskId: row.task_id,
          status: row.status as StoredTaskStatus,
          recordedAt: Number(row.recorded_at),
        })),
        bounds.retained,
      );
      if (drop.length > 0) await trx(TASKS_TABLE).whereIn('task_id', drop).delete();
      return true;
    });
  }

  async activate(taskId: string, backend: TaskActivation, state: TaskState) {
    const slot = await this.get(taskId);
    if (slot === undefined || slot.status !== 'pending') return undefined;
    const updated = await this.knex(TASKS_TABLE)
      .where({ task_id: taskId, status: 'pending', version: slot.version })
      .update({
        ...('heldResult' in backend
          ? { held_result: backend.heldResult }
          : {
              backend_task_id: backend.backendTaskId,
              backend_session_id: backend.backendSessionId ?? null,
            }),
        ...stateColumns(slot.recordedAt, state),
        version: slot.version + 1,
      });
    return updated === 1 ? this.get(taskId) : undefined;
  }

  async release(taskId: string) {
    await this.knex(TASKS_TABLE).where({ task_id: taskId, status: 'pending' }).delete();
  }

  async get(taskId: string) {
    const row = await this.knex<TaskRow>(TASKS_TABLE).where('task_id', taskId).first();
    return row === undefined ? undefined : fromRow(row);
  }

  async observe(taskId: string, version: number, state: TaskState) {
    const task = await this.get(taskId);
    if (task === undefined || task.version !== version || task.status === 'pending') return false;
    const updated = await this.knex(TASKS_TABLE)
      .where({ task_id: taskId, version })
      .update({ ...stateColumns(task.recordedAt, state), version: version + 1 });
    return updated === 1;
  }

  async listOf(
    principal: string,
    now: number,
    options: { after?: TaskListPosition; limit?: number } = {},
  ) {
    const { after, limit } = options;
    // Ids compare byte by byte on both engines (SQLite's default; PostgreSQL's "C" collation),
    // so pages follow one order whatever the database's locale.
    const taskIdColumn = isPostgres(this.knex) ? 'task_id collate "C"' : 'task_id';
    const query = this.knex<TaskRow>(TASKS_TABLE)
      .where('principal', principal)
      .andWhereNot('status', 'pending')
      .andWhere('expires_at', '>', now)
      .orderByRaw(`recorded_at desc, ${taskIdColumn} desc`);
    if (after !== undefined) {
      query.andWhere(older =>
        older
          .where('recorded_at', '<', after.recordedAt)
          .orWhere(same =>
            same
              .where('recorded_at', after.recordedAt)
              .andWhereRaw(`${taskIdColumn} < ?`, [after.taskId]),
          ),
      );
    }
    if (limit !== undefined) query.limit(limit);
    return (await query).map(fromRow);
  }

  async countOpen(principal: string, now: number) {
    return countOpenOf(this.knex, principal, now);
  }

  async delete(taskId: string) {
    await this.knex(TASKS_TABLE).where('task_id', taskId).delete();
  }

  async deleteOfServer(server: string, serverIdentity: string) {
    await this.knex(TASKS_TABLE).where({ server, server_identity: serverIdentity }).delete();
  }

  async replaceBackendSession(
    owner: Pick<StoredTask, 'principal' | 'server' | 'serverIdentity'>,
    forgotten: string,
    replacement: string,
  ) {
    await this.knex(TASKS_TABLE)
      .where('backend_session_id', forgotten)
      .andWhere('principal', owner.principal)
      .andWhere('server', owner.server)
      .andWhere('server_identity', owner.serverIdentity)
      .update({ backend_session_id: replacement });
  }

  async pinsBackendSession(backendSessionId: string, now: number) {
    const row = await this.knex(TASKS_TABLE)
      .where('backend_session_id', backendSessionId)
      .andWhere('expires_at', '>', now)
      .first('task_id');
    return row !== undefined;
  }

  async deleteExpired(now: number) {
    const pinned = await this.knex<TaskRow>(TASKS_TABLE)
      .where('expires_at', '<=', now)
      .whereNotNull('backend_session_id')
      .distinct('server', 'server_identity', 'backend_session_id');
    const unpinned: UnpinnedBackendSession[] = [];
    // Per session: whether this call deleted some of its rows, then whether any row is left.
    for (const row of pinned) {
      const deleted = await this.knex(TASKS_TABLE)
        .where({ backend_session_id: row.backend_session_id })
        .andWhere('expires_at', '<=', now)
        .delete();
      if (deleted === 0) continue;
      const left = await this.knex(TASKS_TABLE)
        .where({ backend_session_id: row.backend_session_id })
        .first('task_id');
      if (left === undefined) {
        unpinned.push({
          server: row.server,
          serverIdentity: row.server_identity,
          backendSessionId: row.backend_session_id!,
        });
      }
    }
    await this.knex(TASKS_TABLE).where('expires_at', '<=', now).delete();
    return unpinned;
  }

  async takeLease(taskId: string, holder: string, now: number, until: number) {
    const updated = await this.knex(TASKS_TABLE)
      .where('task_id', taskId)
      .whereIn('status', WATCHED_TASK_STATUSES)
      .andWhere(free =>
        free
          .whereNull('lease_holder')
          .orWhere('lease_holder', holder)
          .orWhere('lease_until', '<', now),
      )
      .update({ lease_holder: holder, lease_until: until });
    return updated === 1;
  }

  async unwatchedOf(principals: readonly string[], now: number) {
    const found: StoredTask[] = [];
    // Bounded statements whatever the number of people listening.
    for (let at = 0; at < principals.length; at += PRINCIPALS_PER_QUERY) {
      const rows = await this.knex<TaskRow>(TASKS_TABLE)
        .whereIn('principal', principals.slice(at, at + PRINCIPALS_PER_QUERY))
        .whereIn('status', WATCHED_TASK_STATUSES)
        .andWhere('expires_at', '>', now)
        .andWhere(free => free.whereNull('lease_holder').orWhere('lease_until', '<', now));
      found.push(...rows.map(fromRow));
    }
    return found;
  }

  async releaseLease(taskId: string, holder: string) {
    await this.knex(TASKS_TABLE)
      .where({ task_id: taskId, lease_holder: holder })
      .update({ lease_holder: null, lease_until: null });
  }
}
