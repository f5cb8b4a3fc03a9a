/*
 * Input during a 2025-11-25 backend's task, read on a legacy `tasks/result` stream
 * (docs/contracts/tasks-and-apps.md §2.1.1 "input", §2.12.1): the backend sends its
 * `elicitation/create`, `sampling/createMessage` or `roots/list` related to the task on that
 * stream, and the broker puts each to the client reading the result, on the client's own
 * `tasks/result` stream (TaskStreamAsker: a gateway id, answered once from any replica, the answer
 * posted to the pinned backend session with the backend's own id). What the backend asks on the
 * task-creating `tools/call` stream, before its `CreateTaskResult`, goes the same way to the
 * creating client's call stream (a 2026-07-28 client's: as `input_required` rounds,
 * TaskCreationRounds).
 *
 * - A request's `_meta["io.modelcontextprotocol/related-task"]` names the broker's task id,
 *   never the backend's; the backend's request id never reaches the client.
 * - A URL elicitation is screened as any (§11.1: https only, named with its server).
 * - A request the reading client cannot take — it declared no such capability, the stream has
 *   nowhere to ask (a 2026-07-28 reader), a method that is no input request, a refused URL, or
 *   the broker failing to record it — is refused towards the backend at once with a JSON-RPC
 *   error naming why, so its tool goes on or fails instead of waiting for an answer that never
 *   comes (as a call's unaskable client does).
 * Requests are handled one at a time, in the order the backend sent them.
 */
import type { LegacyChannel } from '../backend/LegacyChannel';
import type { UrlElicitationPolicy } from '../calls/urlElicitations';
import { screenServerRequest } from '../calls/urlElicitations';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
} from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import {
  capabilityNames,
  missingClientCapabilities,
  requiredCapabilitiesForInputRequest,
} from '../protocol/requestMetadata';
import { RELATED_TASK_META } from '../protocol/legacyTasks';
import type { TaskStreamAsker } from '../types';

/** What a {@link LegacyTaskInput} relays between. */
export interface LegacyTaskInputOptions {
  /** The task's configured server name. */
  server: string;
  /** The broker task id (what the client sees in a request's `related-task`). */
  taskId: string;
  /** The backend's channel, and the pinned session the `tasks/result` went out on. */
  channel: LegacyChannel;
  session: { readonly id: string | undefined; readonly protocolVersion: string };
  /** Where the requests are asked; absent: nowhere (each is refused). */
  asker: TaskStreamAsker | undefined;
  /** The relayable capabilities the reading client declared. */
  capabilities: RelayedClientCapabilities | undefined;
  /** What a URL elicitation may point at; absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
}

/** The input relay of one `tasks/result` exchange; see the file comment. */
export class LegacyTaskInput {
  private handled: Promise<void> = Promise.resolve();

  constructor(private readonly options: LegacyTaskInputOptions) {}

  /** Takes a message the backend sent on the `tasks/result` stream (only requests matter). */
  readonly onServerMessage = (message: JsonRpcMessage, rawId: RawJsonRpcId | undefined): void => {
    if (!('method' in message) || !('id' in message) || rawId === undefined) return;
    const request = message as unknown as Record<string, unknown>;
    this.handled = this.handled.then(() => this.relay(request, rawId)).catch(() => undefined);
  };

  /** The exchange is over: waits for the requests being handled, then retires their ids. */
  async end(): Promise<void> {
    await this.handled;
    await this.options.asker?.end().catch(() => undefined);
  }

  private async relay(message: Record<string, unknown>, rawId: RawJsonRpcId): Promise<void> {
    const { server, taskId, asker, capabilities, session } = this.options;
    const method = String(message.method).slice(0, 100);
    const params = isPlainObject(message.params) ? message.params : undefined;
    const required = requiredCapabilitiesForInputRequest(method, params);
    if (required === undefined) {
      await this.refuse(rawId, `${method} is not a request the broker relays during a task`);
      return;
    }
    if (asker === undefined) {
      await this.refuse(
        rawId,
        `${method} is not available: the broker cannot ask the client of this request (a 2026-07-28 client is asked through tasks/get once the task exists)`,
      );
      return;
    }
    // The members count too: a URL elicitation needs `elicitation.url`, sampling with tools
    // `sampling.tools` (as every other asking path decides).
    const missing = missingClientCapabilities(required, { ...capabilities });
    if (missing !== undefined) {
      await this.refuse(
        rawId,
        `${method} is not available: the client of this request did not declare the ${capabilityNames(missing).join(' and ')} capability`,
      );
      return;
    }
    const screened = screenServerRequest(server, method, params, this.options.urlElicitations);
    if ('refusal' in screened) {
      await this.refuse(rawId, screened.refusal.message, screened.refusal);
      return;
    }
    const meta = isPlainObject(screened.params?._meta) ? screened.params._meta : undefined;
    const relayed =
      meta === undefined || !isPlainObject(meta[RELATED_TASK_META])
        ? { ...message, params: screened.params }
        : {
            ...message,
            params: { ...screened.params, _meta: { ...meta, [RELATED_TASK_META]: { taskId } } },
          };
    try {
      await asker.ask({
        sessionId: session.id,
        protocolVersion: session.protocolVersion,
        rawId,
        message: relayed,
      });
    } catch {
      await this.refuse(rawId, `The broker could not relay ${method} to the client; try again`);
    }
  }

  /** Answers the backend's request `rawId` with an error (best effort). */
  private async refuse(rawId: RawJsonRpcId, message: string, error?: JsonRpcErrorObject) {
    const { channel, session } = this.options;
    await channel
      .respond(session, rawId, {
        error: error ?? { code: JsonRpcErrorCode.MethodNotFound, message },
      })
      .catch(() => undefined);
  }
}
