/*
 * The tasks of the tasks fixture's 2026-07-28 half (docs/contracts/tasks-and-apps.md §8): what a
 * task is (the SEP-2663 `DetailedTask` fields), how each tool's job moves it, and who hears of a
 * change. The HTTP side (modernTasksServer.ts) decides which tool runs and shows the tasks on
 * the wire; this file never sees a request.
 *
 * A task's input requests are keyed by ids the fixture mints per task (`<key>-<n>`), so a
 * broker that passed keys of another task on would be caught.
 */
import { randomUUID } from 'node:crypto';

/** A `CallToolResult` of the 2026-07-28 wire (without `resultType`). */
export interface ToolResult {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
}

/** A JSON-RPC error object, as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
}

/** An input request of a task (`elicitation/create`, in form or URL mode). */
export interface TaskInputRequest {
  method: 'elicitation/create';
  params:
    | { mode: 'form'; message: string; requestedSchema: Record<string, unknown> }
    | { mode: 'url'; message: string; url: string; elicitationId: string };
}

/** The answer to an elicitation, as `tasks/update` carries it. */
export interface ElicitAnswer {
  action?: unknown;
  content?: Record<string, unknown>;
}

/** The status values of SEP-2663. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** One task and the job behind it. */
export interface ModernTask {
  taskId: string;
  tool: string;
  /** `deploy`/`approve`: the target argument. */
  target?: string;
  /** The `Authorization` it was created with: other credentials meet it as unknown. */
  credential: string | undefined;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: ToolResult;
  error?: TaskError;
  /** Input still waiting for an answer, by key. */
  pending: Record<string, TaskInputRequest>;
  /** Answers received, by key. */
  answers: Record<string, ElicitAnswer>;
  /** What the job does once every pending input is answered. */
  onAnswered?: (answers: Record<string, ElicitAnswer>) => void;
  timer?: NodeJS.Timeout;
}

/** How long a task lives (ms). */
export const MODERN_TASK_TTL_MS = 60_000;
/** The `pollIntervalMs` the fixture suggests. */
export const MODERN_TASK_POLL_INTERVAL_MS = 100;

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** Whether a status is final. */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

/** A text result. */
export function textResult(text: string, isError?: boolean): ToolResult {
  return { content: [{ type: 'text', text }], ...(isError && { isError: true }) };
}

/** A form elicitation asking one boolean or string property. */
export function formRequest(
  message: string,
  property: string,
  type: 'boolean' | 'string',
): TaskInputRequest {
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: { [property]: { type } },
        required: [property],
      },
    },
  };
}

/** A URL-mode elicitation asking the person to open `url`. */
export function urlRequest(message: string, url: string): TaskInputRequest {
  return {
    method: 'elicitation/create',
    params: { mode: 'url', message, url, elicitationId: `link-${randomUUID()}` },
  };
}

/** The tasks of one fixture, and the listeners of their changes. */
export class ModernTaskJobs {
  private readonly tasks = new Map<string, ModernTask>();
  private readonly listeners = new Set<(task: ModernTask) => void>();
  private minted = 0;

  /** Creates a working task of `tool` for `credential`. */
  create(tool: string, credential: string | undefined, target?: string): ModernTask {
    const now = new Date().toISOString();
    const task: ModernTask = {
      taskId: `fixture-${randomUUID()}`,
      tool,
      ...(target !== undefined && { target }),
      credential,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: MODERN_TASK_TTL_MS,
      pollIntervalMs: MODERN_TASK_POLL_INTERVAL_MS,
      pending: {},
      answers: {},
    };
    this.tasks.set(task.taskId, task);
    return task;
  }

  /** The task `taskId` names for `credential`, or undefined (unknown, foreign or expired). */
  find(taskId: string, credential: string | undefined): ModernTask | undefined {
    const task = this.tasks.get(taskId);
    if (task === undefined || task.credential !== credential) return undefined;
    if (Date.parse(task.createdAt) + task.ttlMs < Date.now()) return undefined;
    return task;
  }

  /** Every task, oldest first. */
  all(): ModernTask[] {
    return [...this.tasks.values()];
  }

  /** Ends a task with a result (a tool error is `completed` with `isError`, as SEP-2663 says). */
  complete(task: ModernTask, result: ToolResult): void {
    this.settle(task, 'completed', { result });
  }

  /** Ends a task with a protocol error. */
  fail(task: ModernTask, error: TaskError): void {
    this.settle(task, 'failed', { error });
  }

  /** Cancels a task that has not ended; a terminal task stays as it is. */
  cancel(task: ModernTask): void {
    if (isTerminal(task.status)) return;
    this.settle(task, 'cancelled', {});
  }

  /**
   * Parks a task on input: `requests` by key (each key minted unique to the fixture); when every
   * one is answered, `then` runs with all the answers.
   */
  ask(
    task: ModernTask,
    requests: Record<string, TaskInputRequest>,
    then: (answers: Record<string, ElicitAnswer>) => void,
  ): void {
    for (const [key, request] of Object.entries(requests)) {
      this.minted += 1;
      task.pending[`${key}-${this.minted}`] = request;
    }
    task.onAnswered = then;
    this.change(task, 'input_required');
  }

  /**
   * Takes the answers of a `tasks/update`: keys that are pending for this task are recorded, the
   * others ignored (SEP-2663: unknown or answered keys are ignored). The task resumes when
   * nothing is pending any more.
   */
  answer(task: ModernTask, responses: Record<string, unknown>): void {
    let taken = false;
    for (const [key, response] of Object.entries(responses)) {
      if (!(key in task.pending)) continue;
      delete task.pending[key];
      task.answers[key.replace(/-\d+$/, '')] = isRecord(response) ? response : {};
      taken = true;
    }
    if (!taken || task.status !== 'input_required') return;
    if (Object.keys(task.pending).length > 0) {
      this.change(task, 'input_required');
      return;
    }
    const then = task.onAnswered;
    task.onAnswered = undefined;
    this.change(task, 'working');
    then?.(task.answers);
  }

  /** Calls `listener` on every change of any task; returns the unsubscribe. */
  onChange(listener: (task: ModernTask) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every job's timer. */
  close(): void {
    for (const task of this.tasks.values()) clearTimeout(task.timer);
  }

  /** Forgets every task, as a restarted server would (later requests meet them as unknown). */
  forget(): void {
    this.close();
    this.tasks.clear();
  }

  private settle(
    task: ModernTask,
    status: TaskStatus,
    outcome: { result?: ToolResult; error?: TaskError },
  ): void {
    clearTimeout(task.timer);
    task.pending = {};
    task.onAnswered = undefined;
    if (outcome.result !== undefined) task.result = outcome.result;
    if (outcome.error !== undefined) task.error = outcome.error;
    this.change(task, status);
  }

  private change(task: ModernTask, status: TaskStatus): void {
    task.status = status;
    task.lastUpdatedAt = new Date().toISOString();
    for (const listener of this.listeners) listener(task);
  }
}

/** The `DetailedTask` of SEP-2663 for a task (input requests, result or error by status). */
export function detailedTask(task: ModernTask): Record<string, unknown> {
  const shown: Record<string, unknown> = {
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  if (task.statusMessage !== undefined) shown.statusMessage = task.statusMessage;
  if (task.status === 'input_required') shown.inputRequests = { ...task.pending };
  if (task.status === 'completed' && task.result !== undefined) shown.result = task.result;
  if (task.status === 'failed' && task.error !== undefined) shown.error = task.error;
  return shown;
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
