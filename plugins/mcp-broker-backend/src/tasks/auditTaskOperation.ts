/*
 * The one way the task relays (LegacyTaskRelay, ModernTaskRelay, CrossEraTaskRelay, HeldTasks)
 * write a caller's task operation to the audit trail (TaskAuditor, docs/contracts/tasks-and-apps.md
 * §2.14): who asked, the eras of the client and of the task's backend, the task when one was
 * found, and how long the operation took.
 */
import type { TaskCaller } from './findOwnTask';
import type { TaskAuditor, TaskOperation, TaskOutcome } from './TaskAuditor';

/** The eras an operation is audited with: the client's and the task's backend's. */
export interface AuditedEras {
  readonly client: 'legacy' | 'modern';
  readonly backend: 'legacy' | 'modern';
}

/** One operation of `caller` to audit. */
export interface CallerTaskOperation {
  readonly operation: TaskOperation;
  readonly outcome: TaskOutcome;
  readonly eras: AuditedEras;
  /** `performance.now()` when the operation began; absent: answered at once (0 ms). */
  readonly started?: number;
  /** The task's server, own tool name and broker id (a row fits; each absent when unknown). */
  readonly task?: { readonly server?: string; readonly tool?: string; readonly taskId?: string };
}

/** Records `operation` of `caller` with `auditor` (none: nothing is recorded; never throws). */
export async function auditTaskOperation(
  auditor: TaskAuditor | undefined,
  caller: TaskCaller,
  operation: CallerTaskOperation,
): Promise<void> {
  const { started } = operation;
  const { server, tool, taskId } = operation.task ?? {};
  await auditor?.record({
    principal: caller.principal,
    operation: operation.operation,
    outcome: operation.outcome,
    durationMs: started === undefined ? 0 : performance.now() - started,
    clientEra: operation.eras.client,
    backendEra: operation.eras.backend,
    ...(server === undefined ? {} : { server }),
    ...(tool === undefined ? {} : { tool }),
    ...(taskId === undefined ? {} : { taskId }),
    ...(caller.traceId === undefined ? {} : { traceId: caller.traceId }),
  });
}
