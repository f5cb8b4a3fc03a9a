/*
 * Hands a client request the router has routed (ToolCallContext: its backend, its request, the
 * person's headers, its telemetry) to the calls in flight as one ToolCall, whichever era the
 * client speaks: the caller brings the call's client half. The backend is looked up again by
 * name (it may have been removed since the routing: the client then gets the removal error at
 * once, and no client half is made).
 */
import { backendRemoved, toClientError } from '../backend/backendErrors';
import type { BackendChannels } from '../backend/backendChannels';
import { personalEndpointOf } from '../backend/backendTransport';
import type { ProtocolEra } from '../protocol/modernEra';
import type { ToolCallContext } from '../types';
import type { ClientMessageSink } from './callTypes';
import type { CallClient } from './ToolCall';
import type { ToolCalls } from './ToolCalls';

/** What a routed call may send other than the client's own request. */
export interface RoutedCallOptions {
  /** The params sent to the backend, when not the request's own. */
  params?: Record<string, unknown>;
  /** The backend half's era, when not the backend's detected one (see ForwardedToolCall). */
  backendEra?: ProtocolEra;
}

/** See the file comment. */
export class RoutedCalls {
  constructor(
    private readonly calls: ToolCalls,
    /** The live backend by name, with its channels and detected era. */
    private readonly backendOf: (backend: string) => BackendChannels | undefined,
  ) {}

  /**
   * Runs the call of the client half `clientOf` makes, writing what the backend sends to `sink`
   * (the client's answer); resolves when the client's request is answered.
   */
  forward(
    context: Omit<ToolCallContext, 'clientSession'>,
    clientOf: () => CallClient,
    sink: ClientMessageSink,
    options: RoutedCallOptions = {},
  ): Promise<void> {
    const { request } = context;
    const backend = this.backendOf(context.backend.name);
    if (backend === undefined) {
      // Removed from the configuration between the routing and now.
      sink.send({
        jsonrpc: '2.0',
        id: request.id,
        error: toClientError(backendRemoved(context.backend.name)),
      });
      sink.end();
      return Promise.resolve();
    }
    return this.calls.forward(
      {
        client: clientOf(),
        ...(options.backendEra === undefined ? {} : { backendEra: options.backendEra }),
        ...(request.method === 'tools/call' ? {} : { method: request.method }),
        backend,
        ...(context.personalHeaders === undefined
          ? {}
          : { personalEndpoint: personalEndpointOf(backend.endpoint, context.personalHeaders) }),
        clientRequestId: request.id,
        params: options.params ?? request.params ?? {},
        ...(context.telemetry === undefined ? {} : { telemetry: context.telemetry }),
        ...(context.taskCreation === undefined ? {} : { taskCreation: context.taskCreation }),
      },
      sink,
    );
  }
}
