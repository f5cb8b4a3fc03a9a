/*
 * A call's leg on a 2026-07-28 (stateless) backend: no backend session; the request goes out in
 * the envelope (the end client's relayed capabilities without tasks, the broker's clientInfo),
 * with the tool's `x-mcp-header` arguments mirrored by the transport, under the broker's
 * credentials (ModernChannel.call). What comes back is read as on a 2025 backend's stream
 * (callReply.ts); what differs:
 *   - cancelling is closing the stream (2026-07-28 has no `notifications/cancelled`);
 *   - the backend refuses a request with one JSON-RPC error (e.g. -32021): its own answer,
 *     passed through like any error;
 *   - `input_required` goes to the call's client half (`call.client.answerInputs`), which gives
 *     either the answers — a 2025 client is asked each input on its call's stream under a
 *     gateway id, and the backend call is retried with them, at most
 *     {@link MAX_STATELESS_INPUT_ROUNDS} rounds — or the call's final response: a 2026-07-28
 *     client gets the round with the backend's `requestState` sealed in the broker's own (its
 *     retry is a new stateless call), a client that cannot be asked gets an error;
 *   - a task result (tasks extension) ends the call with an error naming the backend, unless
 *     the call may create a task (`taskCreation`, ModernTaskRelay): that decides whether the
 *     backend is told the client takes tasks, and answers the task under the broker's id (it
 *     gets the call — its signal, its client's capabilities, a way to ask the client inputs —
 *     for a creation that waits for the task itself: a 2025 client's plain call, §2.12.3);
 *   - the result loses `resultType` (a 2026-07-28 client's sink puts `complete` back).
 * The backend's requests on the stream are dropped: this revision asks through input_required.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  backendMalformedResponse,
  backendReturnedTask,
  backendTooManyInputRounds,
} from '../backend/backendErrors';
import { isPlainObject, JsonRpcErrorCode } from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import { withoutTasks } from '../protocol/modernResults';
import { withTasksExtension } from '../protocol/modernTasks';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import { readCallReply } from './callReply';
import { withTraceMeta } from '../telemetry/traceContext';
import { observedBackendRequest } from './observedBackendRequest';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import type { CallLeg, ToolCall } from './ToolCall';
import { screenInputRequests, type UrlElicitationPolicy } from './urlElicitations';

/** Most `input_required` rounds a 2026-07-28 backend gets for a 2025 client's call (as the SDK). */
export const MAX_STATELESS_INPUT_ROUNDS = 8;

/** Options of {@link ModernLeg}. */
export interface ModernLegOptions {
  logger: LoggerService;
  /** The `x-mcp-header` declarations of a backend's tool (see AggregatedCatalog). */
  paramHeadersOf?: (backend: string, tool: string) => readonly ParamHeaderDeclaration[];
  /** What a backend's URL elicitation may point at (urlElicitations.ts); absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
}

/** Runs calls on 2026-07-28 backends; see the file comment. */
export class ModernLeg implements CallLeg {
  private nextRequestId = 1;

  constructor(private readonly options: ModernLegOptions) {}

  /**
   * Runs `call` in stateless rounds until a result that is not `input_required`, or one handed
   * to a 2026-07-28 client; throws what kept it from an answer.
   */
  async run(call: ToolCall): Promise<Record<string, unknown>> {
    const { request } = call;
    const backend = call.backend;
    call.stateless = true;
    let params = request.params;
    for (let round = 1; ; round++) {
      const final = await this.once(call, params);
      const result = final.result;
      if (!isPlainObject(result)) return final;
      if (isTaskResult(result)) {
        // Only a task its creation recorded (and shows under the broker's id) reaches the client.
        if (call.request.taskCreation !== undefined) return final;
        throw backendReturnedTask(backend);
      }
      const { resultType, ...rest } = result;
      if (resultType !== 'input_required') return { ...final, result: rest };
      const requestState =
        typeof result.requestState === 'string' ? result.requestState : undefined;
      const screened = screenInputRequests(
        backend,
        isPlainObject(result.inputRequests) ? result.inputRequests : undefined,
        this.options.urlElicitations,
      );
      if ('refusal' in screened) {
        // A stateless backend has no request to answer with an error: the call ends here.
        return {
          jsonrpc: '2.0',
          id: request.clientRequestId,
          error: {
            code: JsonRpcErrorCode.InternalError,
            message: `MCP server "${backend}" asked for input the broker does not relay. ${screened.refusal.message}`,
            data: { backend },
          },
        };
      }
      const inputRequests = screened.inputRequests;
      if (inputRequests === undefined && requestState === undefined) {
        throw backendMalformedResponse(backend, 'an input_required result without inputs');
      }
      if (round > MAX_STATELESS_INPUT_ROUNDS) {
        throw backendTooManyInputRounds(backend, MAX_STATELESS_INPUT_ROUNDS);
      }
      const next = await call.client.answerInputs(call, {
        number: round,
        inputRequests,
        requestState,
        response: final,
      });
      if ('final' in next) return next.final;
      params = {
        ...request.params,
        inputResponses: next.inputResponses,
        ...(requestState === undefined ? {} : { requestState }),
      };
    }
  }

  /** One backend request of the call, through its task creation when it may create a task. */
  private once(call: ToolCall, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const creation = call.request.taskCreation;
    // A plain call goes straight to the backend (no closure on the common path).
    if (creation === undefined) return this.send(call, params, false);
    return creation(
      declareTasks => this.send(call, params, declareTasks),
      call.request.clientRequestId,
      {
        signal: call.signal,
        clientCapabilities: { ...call.client.capabilities },
        askInputs: (inputRequests, number) =>
          call.client.answerInputs(call, {
            number,
            inputRequests,
            requestState: undefined,
            response: { jsonrpc: '2.0', id: call.request.clientRequestId },
          }),
      },
    );
  }

  private async send(
    call: ToolCall,
    params: Record<string, unknown>,
    declareTasks: boolean,
  ): Promise<Record<string, unknown>> {
    const { request } = call;
    const capabilities = withoutTasks({ ...call.client.capabilities });
    const backendRequestId = this.nextRequestId++;
    return observedBackendRequest(call, 'modern', MODERN_PROTOCOL_VERSION, async traceContext => {
      const reply = await request.backend.modern.call(
        {
          jsonrpc: '2.0',
          id: backendRequestId,
          method: call.method,
          params: withTraceMeta(params, traceContext),
        },
        declareTasks ? withTasksExtension(capabilities) : capabilities,
        {
          signal: call.signal,
          mirroredParams: this.paramDeclarations(call),
          endpoint: request.personalEndpoint,
          traceContext,
        },
      );
      return readCallReply(call, reply, {
        backendRequestId,
        logger: this.options.logger,
        loneErrors: true,
        onRequest: async () => {
          // 2026-07-28 has no server-to-client requests (input comes as input_required).
          this.options.logger.warn(
            `MCP server "${call.backend}" sent a request on a 2026-07-28 call's stream; dropped`,
          );
        },
      });
    });
  }

  /**
   * The `x-mcp-header` declarations of the call's tool (read with its list), whose arguments the
   * transport mirrors.
   */
  private paramDeclarations(call: ToolCall): readonly ParamHeaderDeclaration[] | undefined {
    // Only tools declare x-mcp-header; a prompt may share a tool's name.
    if (clientRequestMethod(call.method)?.item !== 'tool') return undefined;
    const tool = call.request.params.name;
    return typeof tool === 'string' ? this.options.paramHeadersOf?.(call.backend, tool) : undefined;
  }
}

/** True for a result of the tasks extension (a task instead of the tool's result). */
function isTaskResult(result: Record<string, unknown>): boolean {
  return result.resultType === 'task' || isPlainObject(result.task);
}
