/*
 * A call's leg on a 2025-11-25 (session-era) backend: the call goes out on the client's own
 * backend session (LegacyChannel.sessionFor: one per client session and backend, opened lazily
 * with the client's relayed capabilities), and its stream is read message by message —
 * everything on it belongs to this call and nothing else, the only correlation used.
 *
 * The backend's own requests (elicitation, sampling, roots) go to the call's client half
 * (`call.client.ask`), which knows what its era can take: a session's client gets them on the
 * call's stream under a gateway id, a 2026-07-28 client's held call turns them into
 * `input_required` rounds, a client that cannot be asked has them refused. A URL elicitation is
 * screened first (urlElicitations.ts): refused toward the backend, or relayed named with its
 * server.
 *
 * A session the backend forgot (its 404 before anything ran) is opened afresh and the call sent
 * once more; a call that ends early is cancelled at the backend with `notifications/cancelled`
 * and its id (ToolCall.end), waiting at most {@link MAX_CANCELLATION_WAIT_MS}.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { BackendError } from '../backend/backendErrors';
import type { LegacySession, LegacySessionRef } from '../backend/LegacyChannel';
import { isPlainObject } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import { untilAborted } from './AnswerRouter';
import { readCallReply } from './callReply';
import { withTraceMeta } from '../telemetry/traceContext';
import { observedBackendRequest } from './observedBackendRequest';
import type { CallLeg, ToolCall } from './ToolCall';
import { screenServerRequest, type UrlElicitationPolicy } from './urlElicitations';

/**
 * Longest wait for a backend to take a cancellation before the call's stream is closed anyway
 * (the client's call must not hang on a backend that stopped answering).
 */
const MAX_CANCELLATION_WAIT_MS = 5_000;

/** Options of {@link LegacyLeg}. */
export interface LegacyLegOptions {
  logger: LoggerService;
  /** Time limit of the broker's short requests to backends (cancellations). */
  requestTimeoutMs: number;
  /** What a backend's URL elicitation may point at (urlElicitations.ts); absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
}

/** Runs calls on 2025-era backends; see the file comment. */
export class LegacyLeg implements CallLeg {
  private nextRequestId = 1;

  constructor(private readonly options: LegacyLegOptions) {}

  /** Runs `call` to its answer (the client's final response); throws what kept it from one. */
  async run(call: ToolCall): Promise<Record<string, unknown>> {
    const { request } = call;
    const legacy = request.backend.legacy;
    for (let attempt = 1; ; attempt++) {
      const session = await untilAborted(
        legacy.sessionFor(call.owner, call.client.capabilities, request.personalEndpoint),
        call.signal,
      );
      try {
        return await this.once(call, session);
      } catch (error) {
        if (error instanceof BackendError && error.reason === 'session-lost') {
          // The backend restarted or expired our session before reading the call: nothing ran,
          // so one fresh session and one retry are safe.
          await legacy.forget(call.owner, session);
          if (attempt === 1) continue;
        }
        throw error;
      }
    }
  }

  private async once(call: ToolCall, session: LegacySession): Promise<Record<string, unknown>> {
    const { request } = call;
    const channel = request.backend.legacy;
    const backendRequestId = this.nextRequestId++;
    const ref: LegacySessionRef = { channel, session };
    call.sentOn(ref, reason => this.cancel(call, ref, backendRequestId, reason));
    return observedBackendRequest(call, 'legacy', session.protocolVersion, async traceContext => {
      const reply = await channel.call(
        session,
        {
          jsonrpc: '2.0',
          id: backendRequestId,
          method: call.method,
          params: withTraceMeta(request.params, traceContext),
        },
        call.signal,
        traceContext,
      );
      const { beforeMessage } = call.client;
      return readCallReply(call, reply, {
        backendRequestId,
        logger: this.options.logger,
        onRequest: parsed => this.onRequest(call, ref, parsed),
        beforeMessage: beforeMessage && (() => beforeMessage(call)),
      });
    });
  }

  private async onRequest(
    call: ToolCall,
    session: LegacySessionRef,
    parsed: ParsedJsonRpcMessage,
  ): Promise<void> {
    const rawId = parsed.rawId!;
    const params = isPlainObject(parsed.message.params) ? parsed.message.params : undefined;
    const screened = screenServerRequest(
      call.backend,
      String(parsed.message.method),
      params,
      this.options.urlElicitations,
    );
    if ('refusal' in screened) {
      await session.channel.respond(
        session.session,
        rawId,
        { error: screened.refusal },
        { timeoutMs: this.options.requestTimeoutMs },
      );
      return;
    }
    const relayed: ParsedJsonRpcMessage =
      screened.params === params
        ? parsed
        : { ...parsed, message: { ...parsed.message, params: screened.params } };
    await call.client.ask(call, session, relayed);
  }

  /** Sends the backend `notifications/cancelled`; resolves once it was taken or failed. */
  private async cancel(
    call: ToolCall,
    { channel, session }: LegacySessionRef,
    backendRequestId: number,
    reason: string,
  ): Promise<void> {
    const waitMs = Math.min(this.options.requestTimeoutMs, MAX_CANCELLATION_WAIT_MS);
    try {
      await channel.cancel(session, backendRequestId, reason, waitMs);
    } catch (error) {
      this.options.logger.debug(
        `Could not cancel a call at MCP server "${call.backend}": ${error}`,
      );
    }
  }
}
