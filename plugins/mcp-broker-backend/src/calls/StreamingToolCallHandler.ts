/*
 * The broker's ToolCallHandler: adapts the router's seam (src/types.ts) to the call machinery.
 * An adapter only: a session's call is handed to the calls in flight with a session's client
 * half (RoutedCalls, ToolCalls.sessionClient), a stateless (2026-07-28) caller's to the era that
 * knows it (StatelessCalls), a task's requests on a `tasks/result` stream to the answer router
 * (TaskStreamAsking), and everything else — a client's answer, its cancellation, a
 * session's or a backend's end, drain and close — to ToolCalls. A client's response ends in a
 * domain outcome (delivered, unknown id, backend failed); the router decides the HTTP answer.
 * What it is made of is built in one place, createStreamingToolCallHandler.ts.
 */
import type { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import type {
  ClientNotificationContext,
  ModernToolCallContext,
  ClientResponseContext,
  ClientResponseOutcome,
  TaskStreamAsker,
  TaskStreamContext,
  ToolCallContext,
  ToolCallHandler,
} from '../types';
import { relayedCapabilities } from '../protocol/capabilities';
import { responseSink } from './responseSink';
import type { RoutedCalls } from './RoutedCalls';
import type { StatelessCalls } from './StatelessCalls';
import type { ToolCalls } from './ToolCalls';

/** What a {@link StreamingToolCallHandler} is made of. */
export interface StreamingToolCallHandlerParts {
  /** The calls in flight on this replica. */
  calls: ToolCalls;
  /** Hands routed requests to `calls`. */
  routed: RoutedCalls;
  /** The calls of stateless (2026-07-28) callers. */
  stateless: StatelessCalls;
  /** Ends the backend sessions of a client session (or stateless caller) with every backend. */
  closeSessionsOf: (owner: string) => Promise<void>;
  /** What seals and opens the `requestState` of 2026-07-28 callers; absent: no rounds. */
  requestStates?: RequestStateSealer;
  /** What runs in the background for the calls and is stopped on close (sweeper, idle sessions). */
  stoppables: ReadonlyArray<{ stop(): void }>;
}

/** The broker's ToolCallHandler; build it with `createStreamingToolCallHandler`. */
export class StreamingToolCallHandler implements ToolCallHandler {
  /** The calls in flight (status and tests). */
  readonly calls: ToolCalls;

  /** See `ToolCallHandler.requestStates`. */
  readonly requestStates: RequestStateSealer | undefined;

  constructor(private readonly parts: StreamingToolCallHandlerParts) {
    this.calls = parts.calls;
    this.requestStates = parts.requestStates;
  }

  handleToolCall(context: ToolCallContext): Promise<void> {
    const { clientSession } = context;
    const client = () =>
      this.calls.sessionClient(
        clientSession.id,
        relayedCapabilities(clientSession.clientCapabilities),
      );
    return this.parts.routed.forward(context, client, responseSink(context));
  }

  handleModernToolCall(context: ModernToolCallContext): Promise<void> {
    return this.parts.stateless.handle(context);
  }

  handleClientResponse(context: ClientResponseContext): Promise<ClientResponseOutcome> {
    return this.calls.answer(context.clientSession.id, context.message, context.personalHeaders);
  }

  async handleClientNotification(context: ClientNotificationContext): Promise<void> {
    if (context.notification.method !== 'notifications/cancelled') return;
    const { params } = context.notification;
    if (this.calls.cancel(context.clientSession.id, params)) return;
    // Not in flight here: with a shared store, maybe on another replica.
    await this.calls.cancelElsewhere(context.clientSession.id, params);
  }

  askOnTaskStream(context: TaskStreamContext): TaskStreamAsker {
    return this.parts.calls.taskStreamAsking(
      context.clientSessionId,
      context.backend,
      responseSink(context),
    );
  }

  closeClientSession(sessionId: string): Promise<void> {
    return this.calls.closeClientSession(sessionId);
  }

  announceSessionEnd(sessionId: string): Promise<void> {
    return this.calls.announceSessionEnd(sessionId);
  }

  closeBackendSessionsOf(sessionId: string): Promise<void> {
    return this.parts.closeSessionsOf(sessionId);
  }

  async removeBackend(name: string): Promise<void> {
    this.calls.removeBackend(name);
  }

  drain(deadlineMs: number): Promise<void> {
    return this.calls.drain(deadlineMs);
  }

  close(): Promise<void> {
    for (const stoppable of this.parts.stoppables) stoppable.stop();
    return this.calls.close();
  }
}
