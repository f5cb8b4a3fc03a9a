/*
 * What both protocol eras do alike over a BackendTransport (the base of LegacyChannel and
 * ModernChannel): send one request and read its answer from the reply — the backend's response
 * with the request's id, other messages of a stream handed to the caller — under one abort
 * signal per request (its timeout and the caller's signals, see requestSignal.ts), and turn
 * whatever went wrong into the one vocabulary of backendErrors.ts: BackendRpcError for the
 * backend's own JSON-RPC error, BackendError for everything that kept the broker from an
 * answer, the caller's own abort reason when the caller aborted. What the backend did wrong
 * (a message that is no JSON-RPC, an answer with another id, an oversized message, no answer in
 * time) is also counted in the backend's `misbehaviours` (BackendMisbehaviours.ts, `/status`).
 */
import {
  classifyJsonRpc,
  JsonRpcMessage,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import { mcpNameSource } from '../protocol/mcpMethods';
import { abortError } from './abortError';
import { BackendError, backendFailure, backendRequestTimedOut } from './backendErrors';
import {
  BackendTransportError,
  type BackendEndpoint,
  type BackendReply,
  type BackendRoute,
  type BackendTransport,
  type OutgoingMessage,
} from './backendTransport';
import { RequestSignal, requestSignal } from './requestSignal';
import { BackendMisbehaviours } from './BackendMisbehaviours';

/** Options of a single request. */
export interface ChannelRequestOptions {
  /** Signals that abort the request (e.g. the caller's and the connection's lifetime). */
  signals?: ReadonlyArray<AbortSignal | undefined>;
  /** Time limit (default: the channel's request timeout). */
  timeoutMs?: number;
  /**
   * Called for every other message the backend sends on this request's stream, with its `id`'s
   * raw JSON token when it has one (to answer a request with its id as written).
   */
  onServerMessage?: (message: JsonRpcMessage, rawId: RawJsonRpcId | undefined) => void;
  /** The request's trace context, sent as HTTP headers (`traceparent`, `tracestate`). */
  traceContext?: Readonly<Record<string, string>>;
}

/** A request's answer and the session the backend opened with it (an `initialize`). */
export interface ChannelAnswer {
  response: JsonRpcResponse;
  sessionId?: string;
}

/** The message to send for `message` (its text and what a transport may mirror of it). */
export function outgoingOf(message: JsonRpcMessage): OutgoingMessage {
  const method = 'method' in message ? message.method : undefined;
  const params = 'params' in message ? message.params : undefined;
  const source = method === undefined ? undefined : mcpNameSource(method);
  const name = source === undefined ? undefined : params?.[source];
  return {
    text: JSON.stringify(message),
    method,
    request: 'id' in message && method !== undefined,
    ...(typeof name === 'string' ? { name } : {}),
    ...(params?.arguments === undefined ? {} : { arguments: params.arguments }),
  };
}

/** The parts of a channel that do not depend on the era; see the file comment. */
export abstract class BackendChannel {
  constructor(
    /** The backend and the broker's credentials for it. */
    readonly endpoint: BackendEndpoint,
    protected readonly transport: BackendTransport,
    /** Default time limit of a request (`mcpBroker.requestTimeout`). */
    readonly requestTimeoutMs: number,
    /** Where this backend's misbehaviours are counted (shared by both eras' channels). */
    readonly misbehaviours: BackendMisbehaviours = new BackendMisbehaviours(),
  ) {}

  /** The backend's configured name. */
  get backend(): string {
    return this.endpoint.name;
  }

  /**
   * Sends `message` on `route` and resolves with the backend's response to it (result or
   * error) and the session it opened, whether the backend answers with one message or a
   * stream. Rejects with a BackendError, or the caller's abort reason.
   */
  protected async exchange(
    route: BackendRoute,
    message: JsonRpcRequest,
    options: ChannelRequestOptions,
  ): Promise<ChannelAnswer> {
    const scope = requestSignal(options.signals ?? [], options.timeoutMs ?? this.requestTimeoutMs);
    try {
      let reply: BackendReply;
      try {
        reply = await this.transport.send(route, outgoingOf(message), {
          signal: scope.signal,
          ...(options.traceContext === undefined ? {} : { traceContext: options.traceContext }),
        });
      } catch (error) {
        throw this.failure(error, scope, 'timed out', false);
      }
      const response = await this.readAnswer(reply, message, scope, options);
      return { response, sessionId: reply.sessionId };
    } finally {
      scope.release();
    }
  }

  /** Sends a notification or a response; the backend takes it without an answer. */
  protected async deliver(
    route: BackendRoute,
    message: OutgoingMessage,
    options: { signals?: ReadonlyArray<AbortSignal | undefined>; timeoutMs?: number },
  ): Promise<void> {
    const scope = requestSignal(options.signals ?? [], options.timeoutMs ?? this.requestTimeoutMs);
    try {
      const reply = await this.transport.send(route, message, { signal: scope.signal });
      reply.discard();
    } catch (error) {
      throw this.failure(error, scope, 'timed out', false);
    } finally {
      scope.release();
    }
  }

  /**
   * Reads the response to `message` from the reply. Stopping at the answer leaves the rest of a
   * stream to arrive, so the connection is reused.
   */
  private async readAnswer(
    reply: BackendReply,
    message: JsonRpcRequest,
    scope: RequestSignal,
    options: ChannelRequestOptions,
  ): Promise<JsonRpcResponse> {
    try {
      for await (const item of reply) {
        if (item.type === 'malformed') {
          this.misbehaviours.record('malformedMessages');
          if (!reply.single) continue; // not JSON: not a message for us
          throw this.protocolError(`answered ${message.method} with invalid JSON`);
        }
        const parsed = classifyJsonRpc(item.parsed.message);
        if (parsed?.kind === 'response') {
          const { id } = parsed.message;
          // A lone error without an id (a refusal before the request was read) answers it too.
          if (id === message.id || (reply.single && id === null && 'error' in parsed.message)) {
            return parsed.message;
          }
          this.misbehaviours.record('mismatchedIds');
        }
        if (reply.single) break;
        if (parsed) options.onServerMessage?.(parsed.message, item.parsed.rawId);
      }
    } catch (error) {
      if (error instanceof BackendError) throw error;
      if (error instanceof BackendTransportError && error.failure === 'too-large') {
        this.misbehaviours.record('oversizedMessages');
        throw this.protocolError(`answered ${message.method} with ${error.detail}`);
      }
      if (scope.timedOut || scope.abortedParent) {
        throw this.failure(error, scope, `${message.method} timed out`, true);
      }
      throw this.streamClosed();
    }
    if (reply.single) {
      throw this.protocolError(`answered ${message.method} without a matching JSON-RPC response`);
    }
    throw this.streamClosed();
  }

  /**
   * The error of a failed request or answer (`timeoutText` if it timed out): a timeout, the
   * caller's own abort reason, or the transport's failure in the common vocabulary.
   */
  protected failure(
    error: unknown,
    scope: RequestSignal,
    timeoutText: string,
    answering: boolean,
  ): unknown {
    if (scope.timedOut) {
      this.misbehaviours.record('timeouts');
      return backendRequestTimedOut(this.backend, timeoutText);
    }
    if (scope.abortedParent) {
      const reason: unknown = scope.abortedParent.reason;
      // A caller's own deadline (e.g. `AbortSignal.timeout`) counts as a timeout.
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        return backendRequestTimedOut(this.backend, timeoutText);
      }
      return abortError(reason);
    }
    return backendFailure(this.backend, error, answering);
  }

  /** The backend answered, but not with what the protocol asks for. */
  protected protocolError(detail: string): BackendError {
    return new BackendError(
      this.backend,
      'malformed-response',
      `MCP server "${this.backend}" ${detail}`,
      {
        statusDetail: detail,
      },
    );
  }

  private streamClosed(): BackendError {
    return new BackendError(
      this.backend,
      'stream-ended',
      `MCP server "${this.backend}" closed the response stream before answering`,
      { statusDetail: 'closed the response stream before answering' },
    );
  }
}
