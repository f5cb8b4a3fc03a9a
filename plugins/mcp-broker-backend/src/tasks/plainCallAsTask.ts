/*
 * The `-32021` fallback of a 2025-11-25 client's plain `tools/call` (no `params.task`) to a
 * 2026-07-28 backend (docs/contracts/tasks-and-apps.md §2.12.3): the broker listed every tool of
 * such a backend as `taskSupport: "optional"`, so the plain form must work even for a tool the
 * backend runs only as a task.
 *
 * The call goes without the extension; when the backend answers `-32021` requiring it, the
 * broker declares it and sends the call once more (later input rounds of the call declare it at
 * once). A task answer is then the broker's own task: it polls the backend's `tasks/get` every
 * `max(pollIntervalMs, minPollInterval)`, asks the task's input of the client on the call's
 * stream (gateway ids, the call machinery's; URL elicitations screened as every one is) and
 * answers it with `tasks/update`, and answers the still-open call with the task's result (its
 * error, or `-32603` "Task was cancelled"). The call's `toolCallTimeout` bounds it all: when the
 * call ends first, the backend is sent `tasks/cancel` (best effort) and the call ends as any
 * call does (the timeout error). No row is kept: the task's id never leaves this function.
 */
import { backendMalformedResponse } from '../backend/backendErrors';
import { sleep } from '../backend/sleep';
import { screenInputRequests, type UrlElicitationPolicy } from '../calls/urlElicitations';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcResponse,
} from '../protocol/jsonRpc';
import { isAskableInputRequest } from '../protocol/askableInputRequest';
import { modernTaskOf, requiresTasksExtension, withoutRelatedTask } from '../protocol/modernTasks';
import type { TaskCreation, TaskCreationCall } from '../types';
import { withBrokerTaskId } from './backendTaskError';
import { TASK_CANCELLED } from './taskErrors';
import { namesTerminalStatus } from './TaskStore';

/** A request about the backend's task `backendTaskId` (the modern relay's stateless send). */
export type BackendTaskRequest = (
  method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
  backendTaskId: string,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<JsonRpcResponse>;

/** What {@link plainCallAsTask} needs. */
export interface PlainCallAsTaskOptions {
  /** The backend's configured name (errors name it). */
  server: string;
  /** `mcpBroker.tasks.minPollInterval` in ms. */
  minPollIntervalMs: number;
  /** Sends a request about the backend's task (stateless, the extension declared). */
  request: BackendTaskRequest;
  /** What a backend's URL elicitation may point at (urlElicitations.ts); absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
}

/** The task creation of a plain call that falls back to a task (see the file comment). */
export function plainCallAsTask(options: PlainCallAsTaskOptions): TaskCreation {
  // Once the backend required the extension, the call's later input rounds declare it at once.
  let declare = false;
  return async (send, requestId, call) => {
    let response = await send(declare);
    if (
      !declare &&
      isPlainObject(response.error) &&
      requiresTasksExtension(response.error as unknown as JsonRpcErrorObject)
    ) {
      declare = true;
      response = await send(true);
    }
    const answer = isPlainObject(response.result) ? response.result : undefined;
    if (answer?.resultType !== 'task' || call === undefined) return response;
    const task = modernTaskOf(answer);
    if (task === undefined) {
      throw backendMalformedResponse(options.server, 'a task result without a valid task');
    }
    const state = { ended: false };
    try {
      return {
        jsonrpc: '2.0',
        id: requestId,
        ...(await awaitTask(options, task.taskId, call, state)),
      };
    } finally {
      if (!state.ended) {
        // The call ends before the task (its timeout, its client, input that cannot be given):
        // nobody can reach the task any more, so it is not left running. Its own signal (the
        // call's may have aborted); the channel's requestTimeout bounds it.
        const signal = new AbortController().signal;
        await options.request('tasks/cancel', task.taskId, {}, signal).catch(() => undefined);
      }
    }
  };
}

/**
 * Polls the backend's task until it ends (then `state.ended`), relaying its input; its `result`
 * or `error`, or the error that ends the call first.
 */
async function awaitTask(
  options: PlainCallAsTaskOptions,
  backendTaskId: string,
  call: TaskCreationCall,
  state: { ended: boolean },
): Promise<{ result: Record<string, unknown> } | { error: unknown }> {
  const { server, request } = options;
  const answered = { keys: new Set<string>(), rounds: 0 };
  for (;;) {
    if (call.signal.aborted) throw call.signal.reason;
    const got = await request('tasks/get', backendTaskId, {}, call.signal);
    if ('error' in got) return { error: hidingTaskId(got.error, backendTaskId) };
    const seen = modernTaskOf(got.result);
    if (seen === undefined) {
      throw backendMalformedResponse(server, 'a tasks/get answer that is not a task');
    }
    const shown = got.result as Record<string, unknown>;
    state.ended = namesTerminalStatus(seen.status);
    if (seen.status === 'completed' && isPlainObject(shown.result)) {
      return { result: withoutRelatedTask(shown.result) };
    }
    if (seen.status === 'failed' && isPlainObject(shown.error)) {
      return { error: hidingTaskId(shown.error, backendTaskId) };
    }
    if (seen.status === 'cancelled') return { error: TASK_CANCELLED.error };
    if (seen.status === 'completed' || seen.status === 'failed') {
      const missing = seen.status === 'completed' ? 'result' : 'error';
      throw backendMalformedResponse(server, `a ${seen.status} task without its ${missing}`);
    }
    if (seen.status === 'input_required') {
      const ended = await relayInput(options, backendTaskId, shown.inputRequests, answered, call);
      if (ended !== undefined) return ended;
    }
    const interval = seen.pollIntervalMs ?? options.minPollIntervalMs;
    await sleep(Math.max(interval, options.minPollIntervalMs), call.signal);
  }
}

/**
 * Asks the client the task's inputs not answered yet and sends the answers with `tasks/update`;
 * undefined when the task goes on, else how the call ends (input the broker does not relay, a
 * client that cannot be asked, a refused update).
 */
async function relayInput(
  options: PlainCallAsTaskOptions,
  backendTaskId: string,
  inputRequests: unknown,
  answered: { keys: Set<string>; rounds: number },
  call: TaskCreationCall,
): Promise<{ result: Record<string, unknown> } | { error: unknown } | undefined> {
  const { server } = options;
  const screened = screenInputRequests(
    server,
    isPlainObject(inputRequests) ? inputRequests : undefined,
    options.urlElicitations,
  );
  if ('refusal' in screened) {
    return {
      error: {
        code: JsonRpcErrorCode.InternalError,
        message: `MCP server "${server}" asked for input the broker does not relay. ${screened.refusal.message}`,
        data: { backend: server },
      },
    };
  }
  // An input the client cannot answer is not asked: the task waits (the call's timeout ends it).
  const pending = Object.fromEntries(
    Object.entries(screened.inputRequests ?? {}).filter(
      ([key, request]) =>
        !answered.keys.has(key) && isAskableInputRequest(request, call.clientCapabilities),
    ),
  );
  if (Object.keys(pending).length === 0) return undefined;
  answered.rounds += 1;
  const outcome = await call.askInputs(pending, answered.rounds);
  if ('final' in outcome) {
    const { final } = outcome;
    return 'error' in final
      ? { error: final.error }
      : { result: isPlainObject(final.result) ? final.result : {} };
  }
  const update = await options.request(
    'tasks/update',
    backendTaskId,
    { inputResponses: outcome.inputResponses },
    call.signal,
  );
  if ('error' in update) return { error: hidingTaskId(update.error, backendTaskId) };
  for (const key of Object.keys(pending)) answered.keys.add(key);
  return undefined;
}

/**
 * A backend's JSON-RPC error about its task with the task's id, wherever it is named, replaced
 * by `<task>`: the client made no task and must not learn the backend's id (§2.3).
 */
function hidingTaskId(error: unknown, backendTaskId: string): unknown {
  if (
    !isPlainObject(error) ||
    typeof error.message !== 'string' ||
    typeof error.code !== 'number'
  ) {
    return error;
  }
  return withBrokerTaskId(error as unknown as JsonRpcErrorObject, {
    taskId: '<task>',
    backendTaskId,
  });
}
