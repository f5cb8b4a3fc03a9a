/*
 * Input before a 2025-11-25 backend's task exists, for a 2026-07-28 client
 * (docs/contracts/tasks-and-apps.md §2.12.4, spec §9): what the backend asks on the
 * task-creating `tools/call` stream of its pinned session, before its `CreateTaskResult`
 * (`elicitation/create`, `sampling/createMessage`, `roots/list`), becomes MRTR rounds — each
 * answered to the client as `resultType: "input_required"` with the requests under keys of this
 * broker and a sealed `requestState` (RequestStateSealer: bound to the principal, the tool, its
 * arguments and endpoint, expiring with `elicitationTtl`, single use), while the backend call
 * stays open ("held") on this replica. The client's retry (`inputResponses` + `requestState`)
 * answers the backend's requests with their original ids and type on the pinned session; then
 * the creation goes on — another round, or its answer (the task, or an error).
 *
 * - Requests the backend sends together (before the event loop turns) form one round; an
 *   unanswered one is asked again in the next round; keys the round did not ask are ignored.
 * - The client going away while its request waits cancels the creation (as a call's does); a
 *   round not answered within the TTL cancels it too (the backend call is cancelled by the
 *   legacy relay, its slot released).
 * - Held on this replica only: a retry that reaches another replica (or this one after the
 *   creation ended) is refused with `call-ended` (HTTP 400), nothing reaches a backend.
 * Without a sealer (no `requestState` keys configured) there are no rounds: the backend's
 * requests are refused towards it (LegacyTaskInput).
 */
import { randomUUID } from 'node:crypto';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import { isPlainObject } from '../protocol/jsonRpc';
import {
  type InputRequest,
  inputRequestFromServerRequest,
  inputRequiredResult,
  type InputRetry,
} from '../protocol/modernResults';
import {
  type RequestStateBinding,
  RequestStateRefusal,
  type RequestStateSealer,
} from '../inputRequests/RequestStateSealer';
import type { BackendSessionRequest, TaskStreamAsker } from '../types';
import type { TaskReply } from './TaskReply';

/** A backend session as an answer to one of its requests names it. */
export interface AskingSession {
  readonly id: string | undefined;
  readonly protocolVersion: string;
}

/** Options of {@link TaskCreationRounds}. */
export interface TaskCreationRoundsOptions {
  /** Seals and opens `requestState`; absent: no rounds. */
  sealer: RequestStateSealer | undefined;
  /** How long a round waits for the client's retry (`elicitationTtl`). */
  ttlMs: number;
  /** Posts the answer to request `rawId` of `server`'s backend session `session`. */
  respond(
    server: string,
    session: AskingSession,
    rawId: RawJsonRpcId,
    answer: { result: Record<string, unknown> },
  ): Promise<void>;
}

/** A task creation: runs with the asker of its backend's requests and its own signal. */
export type TaskCreationRun = (
  askOn: ((server: string) => TaskStreamAsker | undefined) | undefined,
  signal: AbortSignal,
) => Promise<TaskReply | undefined>;

/** A backend request of a held creation. */
interface AskedInput {
  key: string;
  rawId: RawJsonRpcId;
  session: AskingSession;
  request: InputRequest;
}

/** One creation held between rounds. */
interface HeldCreation {
  id: string;
  server: string;
  binding: RequestStateBinding;
  /** Asked by the backend, not yet put to the client. */
  pending: AskedInput[];
  /** Put to the client in the last round, not answered yet. */
  asked: AskedInput[];
  nextKey: number;
  /** Wakes the request waiting for a round (set while one waits). */
  wake?: () => void;
  roundStart?: NodeJS.Immediate;
  done: Promise<{ reply: TaskReply | undefined } | { error: unknown }>;
  abort: AbortController;
  expiry?: NodeJS.Timeout;
}

/** See the file comment. */
export class TaskCreationRounds {
  private readonly held = new Map<string, HeldCreation>();

  constructor(private readonly options: TaskCreationRoundsOptions) {}

  /**
   * Runs a creation for the request bound by `binding`; resolves with its answer, or with an
   * `input_required` round when its backend asks first. `clientGone` aborts it while the
   * client waits.
   */
  async start(
    server: string,
    binding: RequestStateBinding,
    clientGone: AbortSignal,
    run: TaskCreationRun,
  ): Promise<TaskReply | undefined> {
    if (this.options.sealer === undefined) return run(undefined, clientGone);
    const abort = new AbortController();
    const creation: HeldCreation = {
      id: randomUUID(),
      server,
      binding,
      pending: [],
      asked: [],
      nextKey: 1,
      abort,
      done: Promise.resolve({ reply: undefined }),
    };
    creation.done = run(() => this.askerOf(creation), abort.signal).then(
      reply => ({ reply }),
      (error: unknown) => ({ error }),
    );
    this.held.set(creation.id, creation);
    void creation.done.then(() => this.forget(creation));
    return this.next(creation, clientGone);
  }

  /**
   * A retry with `requestState`: its answers go to the backend, then the creation goes on.
   * Throws RequestStateRefusal for a state that does not open or names no creation held here.
   */
  async resume(
    binding: RequestStateBinding,
    retry: InputRetry,
    clientGone: AbortSignal,
  ): Promise<TaskReply | undefined> {
    const { sealer } = this.options;
    if (sealer === undefined) throw new RequestStateRefusal('malformed');
    const opened = await sealer.open(retry.requestState!, binding);
    const creation = opened.callId === undefined ? undefined : this.held.get(opened.callId);
    if (creation === undefined) throw new RequestStateRefusal('call-ended');
    clearTimeout(creation.expiry);
    const answers = retry.inputResponses ?? {};
    const answered = creation.asked.filter(input => isPlainObject(answers[input.key]));
    creation.asked = creation.asked.filter(input => !answered.includes(input));
    for (const input of answered) {
      await this.options
        .respond(creation.server, input.session, input.rawId, { result: answers[input.key] })
        .catch(() => undefined);
    }
    return this.next(creation, clientGone);
  }

  /** Waits for the creation's answer or its next round, while the client waits. */
  private async next(
    creation: HeldCreation,
    clientGone: AbortSignal,
  ): Promise<TaskReply | undefined> {
    const onGone = () => creation.abort.abort();
    clientGone.addEventListener('abort', onGone);
    if (clientGone.aborted) onGone();
    try {
      const round = new Promise<'round'>(resolve => {
        creation.wake = () => resolve('round');
        if (creation.pending.length > 0 || creation.asked.length > 0) this.startRound(creation);
      });
      const outcome = await Promise.race([creation.done, round]);
      creation.wake = undefined;
      if (outcome !== 'round') {
        if ('error' in outcome) throw outcome.error;
        return outcome.reply;
      }
      creation.asked = [...creation.asked, ...creation.pending];
      creation.pending = [];
      const requestState = this.options.sealer!.seal(creation.binding, {
        callId: creation.id,
        backend: creation.server,
      });
      creation.expiry = setTimeout(() => creation.abort.abort(), this.options.ttlMs);
      creation.expiry.unref();
      return {
        result: inputRequiredResult({
          inputRequests: Object.fromEntries(
            creation.asked.map(input => [input.key, input.request]),
          ),
          requestState,
        }),
      };
    } finally {
      clientGone.removeEventListener('abort', onGone);
    }
  }

  /** The asker of the creation's backend requests: each becomes an input of the next round. */
  private askerOf(creation: HeldCreation): TaskStreamAsker {
    return {
      ask: async (request: BackendSessionRequest) => {
        const { message } = request;
        const input = inputRequestFromServerRequest(
          String(message.method),
          isPlainObject(message.params) ? message.params : undefined,
        );
        if (input === undefined) throw new Error(`${String(message.method)} is no input request`);
        creation.pending.push({
          key: `input-${creation.nextKey++}`,
          rawId: request.rawId,
          session: { id: request.sessionId, protocolVersion: request.protocolVersion },
          request: input,
        });
        if (creation.wake !== undefined) this.startRound(creation);
      },
      end: async () => undefined,
    };
  }

  /** Starts a round once the event loop turns (requests sent together join it). */
  private startRound(creation: HeldCreation): void {
    if (creation.roundStart !== undefined) return;
    creation.roundStart = setImmediate(() => {
      creation.roundStart = undefined;
      creation.wake?.();
    });
  }

  private forget(creation: HeldCreation): void {
    clearTimeout(creation.expiry);
    if (creation.roundStart !== undefined) clearImmediate(creation.roundStart);
    this.held.delete(creation.id);
  }
}
