/*
 * Input during the emulated `tasks/result` of a 2025-11-25 client whose task runs on a
 * 2026-07-28 backend (docs/contracts/tasks-and-apps.md §2.12.3; spec §9's gateway ids).
 *
 * - Asking: while the polled task is `input_required`, each of its `inputRequests` entries
 *   becomes a real request to the client on that `tasks/result` stream (`elicitation/create`,
 *   `sampling/createMessage`, `roots/list`), under a gateway id (ElicitationIdMap, bound to the
 *   client session, single use) recorded with the task and the backend's key, and with
 *   `_meta["io.modelcontextprotocol/related-task"] = { taskId: <broker id> }`. A stream asks each
 *   key once; a later `tasks/result` asks again what is still unanswered. An input the client
 *   declared no capability for is not asked (the task waits). The stream's gateway ids go when
 *   it ends.
 * - Answering: the client's answer, on any replica (the ids live in the shared store), claims
 *   the id once and becomes the task's `tasks/update` with `{ <backend key>: <answer> }` — the
 *   modern relay's, so the caller's ownership and `mcp-broker.tool.use` are checked again
 *   (§2.7, §2.8). An answer the backend could not take leaves the id answerable; a client's
 *   error answer sends nothing (the input stays unanswered: a later `tasks/result` asks again).
 */
import { randomUUID } from 'node:crypto';
import { UNKNOWN_ANSWER_ERROR_CODE } from '../calls/AnswerRouter';
import { isGatewayId, type ElicitationIdMap } from '../calls/ElicitationIdMap';
import type { ClientAnswer } from '../calls/callTypes';
import { isPlainObject } from '../protocol/jsonRpc';
import { RELATED_TASK_META } from '../protocol/legacyTasks';
import { isAskableInputRequest } from '../protocol/askableInputRequest';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import type { ClientResponseOutcome } from '../types';
import type { TaskCaller } from './findOwnTask';
import type { TaskReply } from './TaskReply';

/** `data.reason` of the relay's answers saying the task is gone for this caller. */
const TASK_GONE_REASONS = new Set(['task-not-found', 'task-expired', 'task-lost']);

/** Options of {@link EmulatedTaskInput}. */
export interface EmulatedTaskInputOptions {
  /** The gateway ids (their store is shared by the replicas with `sessionStore: database`). */
  elicitations: ElicitationIdMap;
  /** The task's `tasks/update` (the modern relay's: §2.7 steps 3–6 and §2.8 included). */
  update: (
    caller: TaskCaller,
    taskId: string,
    inputResponses: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<TaskReply>;
  /** How long the answer's `tasks/update` may take (`mcpBroker.requestTimeout`). */
  requestTimeoutMs: number;
}

/** The 2025-11-25 client of one `tasks/result` stream. */
export interface TaskInputClient {
  /** Its session id: only it may answer. */
  readonly sessionId: string;
  /** What it declared in `initialize`: only requests these cover are asked. */
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** Writes one message on the stream; false when the stream is gone. */
  send(message: Record<string, unknown>): boolean;
}

/** The questions of one `tasks/result` stream (see {@link EmulatedTaskInput.open}). */
export interface TaskInputStream {
  /** Asks the client each entry of `inputRequests` not yet asked on this stream. */
  ask(inputRequests: Record<string, unknown> | undefined): Promise<void>;
  /** The stream ended: its gateway ids go. */
  close(): Promise<void>;
}

/** See the file comment. */
export class EmulatedTaskInput {
  constructor(private readonly options: EmulatedTaskInputOptions) {}

  /**
   * The questions of `caller`'s `tasks/result` stream of the task `taskId` on `server` (its
   * `inputRequests`, URL elicitations already screened, come from the relay's `tasks/get`).
   */
  open(
    caller: TaskCaller,
    taskId: string,
    server: string,
    client: TaskInputClient,
  ): TaskInputStream {
    const { elicitations } = this.options;
    const streamId = randomUUID();
    const asked = new Set<string>();
    let registered = false;
    const stream: TaskInputStream = {
      async ask(inputRequests) {
        for (const [key, request] of Object.entries(inputRequests ?? {})) {
          // Not askable of this client: the task waits.
          if (asked.has(key) || !isAskableInputRequest(request, client.capabilities)) continue;
          const params = isPlainObject(request.params) ? request.params : {};
          asked.add(key);
          registered = true;
          const mapping = await elicitations.register({
            backendRequestId: JSON.stringify(key),
            backend: server,
            backendSessionId: undefined,
            protocolVersion: MODERN_PROTOCOL_VERSION,
            clientSessionId: client.sessionId,
            callId: streamId,
            task: { taskId, backendInputKey: key, principal: caller.principal },
          });
          const meta = isPlainObject(params._meta) ? params._meta : {};
          client.send({
            jsonrpc: '2.0',
            id: mapping.gatewayId,
            method: request.method,
            params: { ...params, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } },
          });
        }
      },
      async close() {
        if (registered) await elicitations.releaseCall(streamId);
      },
    };
    return stream;
  }

  /**
   * A session's JSON-RPC response, if it answers a task input (see the file comment); undefined
   * when its id is no task input's (the call machinery's answer router takes it then).
   * `callerOf` gives the answering request's caller (its tool decisions).
   */
  async answer(
    clientSessionId: string,
    answer: ClientAnswer,
    callerOf: () => Promise<TaskCaller>,
  ): Promise<ClientResponseOutcome | undefined> {
    const { elicitations, requestTimeoutMs } = this.options;
    if (!isGatewayId(answer.id)) return undefined;
    const peeked = await elicitations.peek(answer.id);
    if (peeked?.task === undefined) return undefined;
    const mapping = await elicitations.claim(answer.id, clientSessionId);
    if (mapping?.task === undefined) {
      return unknownId(
        'This response answers no pending request of this session: its id is unknown, expired or already answered',
      );
    }
    // The client refused: nothing is sent, the input stays unanswered.
    if (answer.error !== undefined) return { outcome: 'delivered' };
    const { taskId, backendInputKey } = mapping.task;
    let reply: TaskReply;
    try {
      reply = await this.options.update(
        await callerOf(),
        taskId,
        { [backendInputKey]: answer.result ?? {} },
        AbortSignal.timeout(requestTimeoutMs),
      );
    } catch (error) {
      // Not handed over: the id is answerable again.
      await elicitations.restore(mapping).catch(() => undefined);
      throw error;
    }
    if (!('error' in reply)) return { outcome: 'delivered' };
    const data = isPlainObject(reply.error.data) ? reply.error.data : {};
    if (typeof data.reason === 'string' && TASK_GONE_REASONS.has(data.reason)) {
      return unknownId(
        `This response answers an input of a task that is no longer available: ${reply.error.message}`,
      );
    }
    await elicitations.restore(mapping).catch(() => undefined);
    return { outcome: 'backend-failed', error: reply.error };
  }
}

function unknownId(message: string): ClientResponseOutcome {
  return { outcome: 'unknown-id', error: { code: UNKNOWN_ANSWER_ERROR_CODE, message } };
}
