/*
 * The calls of stateless (2026-07-28) callers (spec §9), where everything that era needs lives:
 *   - the caller has no session: its backend sessions (for a 2025 backend) are held per
 *     `ModernCaller.poolKey`, open while a call runs or is held, closed when idle
 *     (IdleBackendSessions); the call's client half releases them when the backend call is over;
 *   - what it is sent is shaped for its era: a `complete` result (or the entry's own shape), the
 *     backend's errors as that era words them with their HTTP status, log messages only at the
 *     `logLevel` it asked for;
 *   - its retry (`inputResponses` + `requestState`) resumes the call it answers: a held call of a
 *     2025 backend (here or on another replica, HeldCalls), or — the state naming a 2026-07-28
 *     backend's round — a new stateless call to that backend carrying the backend's own
 *     `requestState` byte for byte. A refused state is answered with its 400 before anything
 *     reaches a backend.
 */
import {
  isPlainObject,
  jsonRpcError,
  JsonRpcErrorCode,
  progressTokenOf,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import type { BackendChannels } from '../backend/backendChannels';
import { relayedCapabilities } from '../protocol/capabilities';
import { mcpNameSource } from '../protocol/mcpMethods';
import {
  completeResult,
  InputRetry,
  modernBackendError,
  modernErrorHttpStatus,
  readInputRetry,
} from '../protocol/modernResults';
import { logLevelAllows } from '../protocol/requestMetadata';
import {
  OpenedRequestState,
  RequestStateBinding,
  RequestStateRefusal,
} from '../inputRequests/RequestStateSealer';
import type { ModernCaller, ModernToolCallContext } from '../types';
import type { ClientMessageSink } from './callTypes';
import type { IdleBackendSessions } from './IdleBackendSessions';
import { responseSink } from './responseSink';
import type { RoutedCalls } from './RoutedCalls';
import type { CallClient } from './ToolCall';
import type { ToolCalls } from './ToolCalls';

/** What {@link StatelessCalls} is made of. */
export interface StatelessCallsParts {
  /** The calls in flight on this replica. */
  calls: ToolCalls;
  /** Hands routed requests to `calls`. */
  routed: RoutedCalls;
  /** Keeps the stateless callers' backend sessions open while used, closes them when idle. */
  statelessSessions: IdleBackendSessions;
  /** The live backend by name, with its channels and detected era. */
  backendOf: (backend: string) => BackendChannels | undefined;
}

/** See the file comment. */
export class StatelessCalls {
  constructor(private readonly parts: StatelessCallsParts) {}

  /** A 2026-07-28 client's `tools/call` (or `prompts/get` / `resources/read`): a call or a retry. */
  async handle(context: ModernToolCallContext): Promise<void> {
    const { caller, backend, request } = context;
    const params = request.params ?? {};
    const retry = readInputRetry(params);
    if ('invalid' in retry) {
      const { id } = request;
      context.response.finish(jsonRpcError(id, JsonRpcErrorCode.InvalidParams, retry.invalid), 400);
      return;
    }
    // The state is bound to the tool (prompt, resource) as the backend knows it (the prefix
    // may change with configuration; the backend and its tool name do not, for a held call).
    const binding = {
      principal: caller.principal,
      method: request.method,
      name: `${backend.name}/${String(params[mcpNameSource(request.method) ?? 'name'])}`,
      arguments: params.arguments,
      // Issued on one curated endpoint, good on that one only (spec §13).
      ...(caller.endpoint === undefined ? {} : { endpoint: caller.endpoint }),
    };
    // A call answered at once (e.g. the backend's -32021) is plain JSON with its own HTTP
    // status (the router's writer streams only when something else comes first).
    const sink = responseSink(
      context,
      message =>
        message.method === 'notifications/message' &&
        !logLevelAllows(caller.logLevel, (message.params as { level?: unknown })?.level)
          ? undefined
          : asCompleteResponse(message, request, context.shapeResult),
      message => (isPlainObject(message.error) ? modernErrorHttpStatus(message.error) : 200),
    );
    if (retry.requestState !== undefined) {
      await this.resume(context, binding, retry, sink);
      return;
    }
    // A 2026-07-28 backend gets `inputResponses` sent without a state as they are (its own
    // keys); a 2025 one knows neither member.
    const forwarded =
      this.parts.backendOf(backend.name)?.era === 'modern' ? params : withoutInputRetry(params);
    await this.parts.routed.forward(context, () => this.clientOf(caller, binding), sink, {
      params: forwarded,
    });
  }

  /**
   * The client half of a stateless caller's call. Its backend sessions stay open while the call
   * runs, also while it is held: the client half releases them when the backend call is over.
   */
  private clientOf(caller: ModernCaller, binding: RequestStateBinding): CallClient {
    return this.parts.calls.statelessClient({
      owner: caller.poolKey,
      capabilities: relayedCapabilities(caller.clientCapabilities),
      caller: { declaredCapabilities: caller.clientCapabilities, binding },
      onEnd: this.parts.statelessSessions.begin(caller.poolKey),
    });
  }

  /** A 2026-07-28 client's retry with `requestState`: resumes its held call (spec §9). */
  private async resume(
    context: ModernToolCallContext,
    binding: RequestStateBinding,
    retry: InputRetry,
    sink: ClientMessageSink,
  ): Promise<void> {
    const { request } = context;
    try {
      const stateless = await this.parts.calls.resume(
        {
          binding,
          requestState: retry.requestState!,
          inputResponses: retry.inputResponses ?? {},
          clientRequestId: request.id,
          progressToken: progressTokenOf(request.params ?? {}),
        },
        sink,
      );
      if (stateless !== undefined) {
        await this.retryModernBackend(context, binding, retry, stateless, sink);
      }
    } catch (error) {
      if (!(error instanceof RequestStateRefusal) || context.response.answered) throw error;
      const refusal = error.toModernError();
      context.response.finish(
        jsonRpcError(request.id, refusal.code, refusal.message, refusal.data),
        refusal.httpStatus,
      );
    }
  }

  /**
   * A 2026-07-28 client's retry of a 2026-07-28 backend's `input_required`: a new stateless call
   * with the client's `inputResponses` (the backend's own keys) and the backend's `requestState`
   * byte for byte. The binding names the backend, so the retry reaches the one that asked.
   */
  private async retryModernBackend(
    context: ModernToolCallContext,
    binding: RequestStateBinding,
    retry: InputRetry,
    opened: OpenedRequestState,
    sink: ClientMessageSink,
  ): Promise<void> {
    const { caller, backend, request } = context;
    if (opened.backend !== backend.name) throw new RequestStateRefusal('foreign-request');
    const params = withoutInputRetry(request.params ?? {});
    await this.parts.routed.forward(context, () => this.clientOf(caller, binding), sink, {
      backendEra: 'modern',
      params: {
        ...params,
        ...(retry.inputResponses === undefined ? {} : { inputResponses: retry.inputResponses }),
        ...(opened.backendRequestState === undefined
          ? {}
          : { requestState: opened.backendRequestState }),
      },
    });
  }
}

/**
 * The call's final response as a 2026-07-28 client is to see it: a result shaped by `shape`
 * (default: `complete`; an `input_required` one stays as it is), an error as that era words it
 * (modernBackendError); anything else unchanged.
 */
function asCompleteResponse(
  message: Record<string, unknown>,
  request: JsonRpcRequest,
  shape: (result: Record<string, unknown>) => Record<string, unknown> = completeResult,
): Record<string, unknown> {
  if (message.id !== request.id) return message;
  if (isPlainObject(message.error)) {
    const error = message.error as unknown as JsonRpcErrorObject;
    return { ...message, error: modernBackendError(request.method, request.params ?? {}, error) };
  }
  if (!isPlainObject(message.result)) return message;
  // An input round and a task (shown by its creation, ModernTaskRelay) are not final results.
  if (message.result.resultType === 'input_required' || message.result.resultType === 'task') {
    return message;
  }
  return { ...message, result: shape(message.result) };
}

/** The call's params without the retry members (a 2025-era backend knows neither). */
function withoutInputRetry(params: Record<string, unknown>): Record<string, unknown> {
  const { inputResponses: _responses, requestState: _state, ...rest } = params;
  return rest;
}
