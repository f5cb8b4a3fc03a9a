/*
 * The tools the official conformance task scenarios call (docs/contracts/tasks-and-apps.md §7,
 * configuration 2), on the tasks fixture's 2025-11-25 half (SDK 1.x `registerToolTask`), so the
 * scenarios can run through a broker that translates them to 2026-07-28 (§2.12.4). They carry the
 * behaviour of the 2026-07-28 half's tools of the same names (modernTasksServer.ts), told the
 * 2025-11-25 way:
 *
 * - `greet {name}`: a plain tool (`taskSupport: forbidden`, the SDK's default), `Hello, <name>!`.
 * - `slow_compute {seconds, label}` (`optional`): a task completed after `seconds` with
 *   `computed <label>`.
 * - `failing_job` (`required`): a task `failed` whose `tasks/result` is a tool error
 *   (`isError: true`).
 * - `protocol_error_job` (`optional`): a task `failed` whose `tasks/result` is the JSON-RPC error
 *   `-32603 Internal error: the job crashed`.
 * - `confirm_delete {filename}` (`optional`): a task that goes `input_required` and asks one form
 *   question related to it (sent on the next `tasks/result` stream of its session): `deleted` when
 *   accepted with `confirm: true`, `kept` otherwise.
 * - `multi_input` (`optional`): a task that asks two questions at once (`name` each):
 *   `<first> <second>`.
 * - `test_tool_with_task` (`required`): asks `name` on the call's own stream before any task
 *   exists, then answers with a task completed with `Hello, <name>!`.
 *
 * A question whose asking fails (the client cannot be asked, or answered with an error) fails the
 * task with a tool error naming why.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CreateTaskRequestHandlerExtra } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  type CallToolResult,
  type ElicitResult,
  ElicitResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What the conformance tools need of the fixture that registers them. */
export interface LegacyConformanceToolsContext {
  /** The fixture's task store (every session's). */
  store: TaskStore;
  /** Runs `run` after `delayMs`, unless the fixture closes first. */
  later(delayMs: number, run: () => Promise<void>): void;
  /** Ends a task as `failed` whose `tasks/result` is the JSON-RPC error `error`. */
  failWithError(
    taskId: string,
    session: string | undefined,
    error: { code: number; message: string },
  ): Promise<void>;
  /** A new task as the requestor asked. */
  newTask(extra: CreateTaskRequestHandlerExtra): ReturnType<TaskStore['createTask']>;
}

/** The JSON-RPC error `protocol_error_job`'s `tasks/result` answers. */
export const PROTOCOL_ERROR_JOB_ERROR = {
  code: -32603,
  message: 'Internal error: the job crashed',
};

/** Registers the conformance tools on `server` (one session's server of the fixture). */
export function registerLegacyConformanceTools(
  server: McpServer,
  context: LegacyConformanceToolsContext,
): void {
  const { store, later, newTask } = context;
  const stored = {
    getTask: async (_args: unknown, extra: { taskId: string; taskStore: TaskStore }) =>
      (await extra.taskStore.getTask(extra.taskId))!,
    getTaskResult: async (_args: unknown, extra: { taskId: string; taskStore: TaskStore }) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  // A task cancelled or expired meanwhile keeps its end: the store refuses a second one.
  const end = (taskId: string, session: string | undefined, result: CallToolResult) =>
    store
      .storeTaskResult(taskId, result.isError ? 'failed' : 'completed', result, session)
      .catch(() => undefined);
  /** Parks a task on `questions` (asked at once, related to it), then ends it with `then`. */
  const ask = async (
    taskId: string,
    session: string | undefined,
    questions: Array<{ message: string; property: string; schema: PropertySchema }>,
    then: (answers: ElicitResult[]) => CallToolResult,
  ) => {
    await store.updateTaskStatus(taskId, 'input_required', undefined, session);
    Promise.all(
      questions.map(question =>
        server.server.elicitInput(
          {
            mode: 'form',
            message: question.message,
            requestedSchema: {
              type: 'object',
              properties: { [question.property]: question.schema },
              required: [question.property],
            },
          },
          { relatedTask: { taskId } },
        ),
      ),
    ).then(
      answers => end(taskId, session, then(answers)),
      (error: unknown) => end(taskId, session, text(`asking failed: ${error}`, true)),
    );
  };

  server.registerTool(
    'greet',
    { description: 'Says hello (no task)', inputSchema: { name: z.string().optional() } },
    async ({ name }) => text(`Hello, ${name ?? 'World'}!`),
  );
  server.experimental.tasks.registerToolTask(
    'slow_compute',
    {
      description: 'Sleeps `seconds`, as a task',
      inputSchema: { seconds: z.number().optional(), label: z.string().optional() },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ seconds, label }, extra) => {
        const task = await newTask(extra);
        const result = text(`computed ${label ?? ''}`.trim());
        later((seconds ?? 0) * 1000, () => end(task.taskId, extra.sessionId, result));
        return { task };
      },
      ...stored,
    },
  );
  server.experimental.tasks.registerToolTask(
    'failing_job',
    {
      description: 'A task (required) that ends with a tool error',
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async extra => {
        const task = await newTask(extra);
        later(50, () => end(task.taskId, extra.sessionId, text('the job failed', true)));
        return { task };
      },
      getTask: extra => stored.getTask(undefined, extra),
      getTaskResult: extra => stored.getTaskResult(undefined, extra),
    },
  );
  server.experimental.tasks.registerToolTask(
    'protocol_error_job',
    {
      description: 'A task that ends with a protocol error',
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async extra => {
        const task = await newTask(extra);
        later(50, () =>
          context
            .failWithError(task.taskId, extra.sessionId, PROTOCOL_ERROR_JOB_ERROR)
            .catch(() => undefined),
        );
        return { task };
      },
      getTask: extra => stored.getTask(undefined, extra),
      getTaskResult: extra => stored.getTaskResult(undefined, extra),
    },
  );
  server.experimental.tasks.registerToolTask(
    'confirm_delete',
    {
      description: 'A task that asks one question',
      inputSchema: { filename: z.string().optional() },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async (_args, extra) => {
        const task = await newTask(extra);
        await ask(
          task.taskId,
          extra.sessionId,
          [{ message: 'Delete the file?', property: 'confirm', schema: { type: 'boolean' } }],
          ([answer]) => text(accepted(answer, 'confirm') ? 'deleted' : 'kept'),
        );
        return { task };
      },
      ...stored,
    },
  );
  server.experimental.tasks.registerToolTask(
    'multi_input',
    {
      description: 'A task that asks two questions at once',
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async extra => {
        const task = await newTask(extra);
        await ask(
          task.taskId,
          extra.sessionId,
          [
            { message: 'First name?', property: 'name', schema: { type: 'string' } },
            { message: 'Last name?', property: 'name', schema: { type: 'string' } },
          ],
          ([first, second]) =>
            text(`${String(first.content?.name)} ${String(second.content?.name)}`),
        );
        return { task };
      },
      getTask: extra => stored.getTask(undefined, extra),
      getTaskResult: extra => stored.getTaskResult(undefined, extra),
    },
  );
  server.experimental.tasks.registerToolTask(
    'test_tool_with_task',
    {
      description: 'Asks a name on the call, then answers with a task (required)',
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async extra => {
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: 'What is your name?',
              requestedSchema: {
                type: 'object',
                properties: { name: { type: 'string' } },
                required: ['name'],
              },
            },
          },
          ElicitResultSchema,
        );
        const task = await newTask(extra);
        const name = answer.action === 'accept' ? answer.content?.name : undefined;
        await extra.taskStore.storeTaskResult(task.taskId, 'completed', text(`Hello, ${name}!`));
        return { task };
      },
      getTask: extra => stored.getTask(undefined, extra),
      getTaskResult: extra => stored.getTaskResult(undefined, extra),
    },
  );
}

/** The schema of one asked property. */
type PropertySchema = { type: 'boolean' } | { type: 'string' };

function text(value: string, isError?: boolean): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError && { isError: true }) };
}

function accepted(answer: ElicitResult | undefined, property: string): boolean {
  return answer?.action === 'accept' && answer.content?.[property] === true;
}
