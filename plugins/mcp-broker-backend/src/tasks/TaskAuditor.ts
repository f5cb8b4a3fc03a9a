/*
 * The audit trail of task operations (docs/contracts/tasks-and-apps.md §2.14): one
 * `mcp-broker.task` event per operation — who, which server and tool, the operation, how it
 * ended and how long it took — naming the task by its `taskRef` (a digest that lets an admin
 * follow one task without holding a usable handle), never by its id. Polling operations (`get`,
 * `result`, `list`, and `listen`: one event per task id a listen names) are `low` severity:
 * they repeat. `ended` is written once per task, by the
 * replica whose observation first saw it end, with the status and the task's age. Arguments, inputs and results are never
 * recorded. A failing auditor is logged and never fails the operation.
 */
import { createHash } from 'node:crypto';
import type { AuditorService, LoggerService } from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';

/** The `eventId` of task operations (Backstage prefixes the plugin id: `mcp-broker.task`). */
export const TASK_EVENT_ID = 'task';

/** What a task operation was. */
export type TaskOperation =
  'create' | 'get' | 'result' | 'update' | 'cancel' | 'list' | 'listen' | 'ended';

/** How a task operation ended. */
export type TaskOutcome =
  'succeeded' | 'failed' | 'denied' | 'not-found' | 'foreign' | 'expired' | 'limited';

/** One audited task operation. */
export interface AuditedTaskOperation {
  principal: string;
  operation: TaskOperation;
  outcome: TaskOutcome;
  /** The task's server and own tool name (absent when no task was found). */
  server?: string;
  tool?: string;
  /** The task's id: only its {@link taskRefOf} is recorded. */
  taskId?: string;
  durationMs: number;
  traceId?: string;
  /** The eras of the client and of the task's backend (default `legacy`, both). */
  clientEra?: 'legacy' | 'modern';
  backendEra?: 'legacy' | 'modern';
  /** `ended`: the status the task ended with, and its age at the broker (ms). */
  status?: string;
  ageMs?: number;
}

/** `taskRef`: base64url of the first 96 bits of the SHA-256 of a task id. */
export function taskRefOf(taskId: string): string {
  return createHash('sha256').update(taskId).digest().subarray(0, 12).toString('base64url');
}

/** Writes `mcp-broker.task` events; see the file comment. */
export class TaskAuditor {
  constructor(
    private readonly auditor: AuditorService,
    private readonly logger: LoggerService,
  ) {}

  /** Records one operation (never throws). */
  async record(operation: AuditedTaskOperation): Promise<void> {
    const polling = ['get', 'result', 'list', 'listen'].includes(operation.operation);
    const meta: JsonObject = {
      principal: operation.principal.replace(/^user:/, ''),
      operation: operation.operation,
      clientEra: operation.clientEra ?? 'legacy',
      backendEra: operation.backendEra ?? 'legacy',
      ...(operation.server === undefined ? {} : { server: operation.server }),
      ...(operation.tool === undefined ? {} : { tool: operation.tool.slice(0, 200) }),
      ...(operation.taskId === undefined ? {} : { taskRef: taskRefOf(operation.taskId) }),
      ...(operation.traceId === undefined ? {} : { traceId: operation.traceId }),
      ...(operation.status === undefined ? {} : { status: operation.status }),
      ...(operation.ageMs === undefined ? {} : { ageMs: Math.round(operation.ageMs) }),
    };
    try {
      const event = await this.auditor.createEvent({
        eventId: TASK_EVENT_ID,
        severityLevel: polling ? 'low' : 'medium',
        meta,
      });
      const end = {
        meta: { outcome: operation.outcome, durationMs: Math.round(operation.durationMs) },
      };
      if (operation.outcome === 'succeeded') await event.success(end);
      else {
        const error = new Error(`task ${operation.operation}: ${operation.outcome}`);
        error.stack = `Error: ${error.message}`;
        await event.fail({ ...end, error });
      }
    } catch (error) {
      this.logger.warn(`MCP broker: could not record a task audit event: ${error}`);
    }
  }
}
