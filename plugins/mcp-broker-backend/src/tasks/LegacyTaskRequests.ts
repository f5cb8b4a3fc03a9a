/*
 * The requests LegacyTaskRelay sends to 2025-11-25 backend sessions
 * (docs/contracts/tasks-and-apps.md §2.7, §4): each one is a CLIENT span of the client's request,
 * its context in `params._meta` and the HTTP headers, and is counted in flight until it answers.
 * The broker's drain waits for them until its deadline, then cuts what is left
 * (`shutting-down`).
 */
import type { BrokerServerConfig } from '../config';
import type { LegacyChannel } from '../backend/LegacyChannel';
import type { ChannelRequestOptions } from '../backend/BackendChannel';
import { withTraceMeta } from '../telemetry/traceContext';
import { errorTypeOfException, resultOfFinalMessage } from '../telemetry/requestResult';
import type { JsonRpcResponse } from '../protocol/jsonRpc';
import { LATEST_PROTOCOL_VERSION } from '../protocol/versions';
import type { TaskCaller } from './findOwnTask';

/** A backend as a request reaches it (a LegacyTaskRelay `TaskBackend` is one). */
export interface TaskRequestBackend {
  readonly server: Pick<BrokerServerConfig, 'name'>;
  readonly channel: Pick<LegacyChannel, 'request'>;
}

/** See the file comment. */
export class LegacyTaskRequests {
  private nextRequestId = 1;
  /** Backend requests in flight (a drain waits for them until its deadline). */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Aborted at the drain deadline: what is still in flight is cut (`shutting-down`). */
  private readonly stopping = new AbortController();

  /** Aborted at the drain deadline (see {@link LegacyTaskRequests.drain}). */
  get stoppingSignal(): AbortSignal {
    return this.stopping.signal;
  }

  /**
   * The broker is shutting down: lets the task requests in flight finish until `timeoutMs` has
   * passed, then cuts them — a long `tasks/result` above all —, each answering `-32000`
   * `shutting-down`, retryable (contract §2.7). Resolves once none is left.
   */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = setTimeout(() => this.stopping.abort(), timeoutMs);
    try {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    } finally {
      clearTimeout(deadline);
    }
  }

  /**
   * Sends `method` with `params` on the backend session `sessionId` and reads its response: a
   * CLIENT span of the caller's request, whose context goes in both carriers (HTTP headers and
   * `params._meta`) instead of the client's trace keys and baggage (contract §4).
   */
  async send(
    on: { backend: TaskRequestBackend; caller: TaskCaller; tool: string },
    sessionId: string | undefined,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs?: number,
    onServerMessage?: ChannelRequestOptions['onServerMessage'],
  ): Promise<JsonRpcResponse> {
    const observed = on.caller.telemetry?.backendRequest({
      server: on.backend.server.name,
      tool: on.tool,
      method,
      era: 'legacy',
      protocolVersion: LATEST_PROTOCOL_VERSION,
    });
    const traceContext = observed?.propagationFields;
    const sent = on.backend.channel.request(
      {
        jsonrpc: '2.0',
        id: `task-${this.nextRequestId++}`,
        method,
        params: withTraceMeta(params, traceContext),
      },
      { id: sessionId, protocolVersion: LATEST_PROTOCOL_VERSION },
      {
        signals: [signal, this.stopping.signal],
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(traceContext === undefined ? {} : { traceContext }),
        ...(onServerMessage === undefined ? {} : { onServerMessage }),
      },
    );
    this.inFlight.add(sent);
    try {
      const { response } = await sent;
      observed?.end(resultOfFinalMessage(response));
      return response;
    } catch (error) {
      observed?.end({
        outcome: 'failed',
        errorType: errorTypeOfException(error),
        exception: error,
      });
      throw error;
    } finally {
      this.inFlight.delete(sent);
    }
  }
}
