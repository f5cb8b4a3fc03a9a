/*
 * ModernChannel: MCP 2026-07-28 (stateless) towards one backend, over its BackendTransport, for
 * the broker's own connection (BackendConnection) and the clients' calls alike
 * (docs/mcp-2026-07-28-notes.md §1–§3, §8):
 *   - every request carries the per-request `_meta` (protocol version, client capabilities,
 *     clientInfo; a `_meta` already in the params, e.g. a progress token, is kept): the
 *     envelope, written here only (`withModernEnvelope`). The transport mirrors what its medium
 *     needs (HTTP: `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) from the message as sent, so a name
 *     rewritten in the body (prefix removed) is rewritten in the mirror with it;
 *   - era detection: `server/discover` first (`probe`). A result that lists 2026-07-28 means
 *     modern; any other answer of the backend (a JSON-RPC error, a refusal) means "not this
 *     revision", and the caller falls back to the legacy handshake. A server error or an answer
 *     that is no MCP message is ambiguous (some 2025-11-25 servers answer an unknown method with
 *     500): the caller tries the legacy handshake, and only its success decides. Rejected
 *     credentials, timeouts and network errors are evidence of neither: they are thrown, like
 *     any connection failure, without a second doomed request;
 *   - `subscriptions/listen`: answered with a stream whose first message must be the
 *     acknowledgement tagged with the listen id, within the open deadline (else the stream is
 *     refused); later messages go to the caller, which validates them, once their subscription
 *     id matches. The backend's closing result ends the stream;
 *   - a call (`call`): the client's request in the envelope, never sent twice; its reply is the
 *     caller's to read, and closing it is the call's cancellation.
 * Holds no state between requests.
 */
import {
  classifyJsonRpc,
  isPlainObject,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonRpc';
import { ListKind } from '../protocol/listKinds';
import { ModernMetaKey } from '../protocol/modernEra';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import { BROKER_IMPLEMENTATION, MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import { BackendError, backendFailure, BackendRpcError } from './backendErrors';
import type {
  BackendEndpoint,
  BackendReply,
  BackendRoute,
  BackendStreamItem,
} from './backendTransport';
import { BackendChannel, ChannelRequestOptions, outgoingOf } from './BackendChannel';
import { requestSignal } from './requestSignal';

/** What `server/discover` told the broker about a modern backend. */
export interface ModernDiscovery {
  /** The backend's capabilities (as sent; the caller removes what it does not relay). */
  capabilities: Record<string, unknown>;
  supportedVersions: string[];
  /** The discover result's `ttlMs`, when it is a number. */
  ttlMs?: number;
}

/**
 * The outcome of the era probe. `unknown`: the answer was neither a modern result nor a clear
 * refusal (a server error, an answer that is no MCP message); `error` is that answer, for the
 * caller to report if the legacy handshake fails too.
 */
export type EraProbe =
  | { era: 'modern'; discovery: ModernDiscovery }
  | { era: 'legacy'; reason: string }
  | { era: 'unknown'; reason: string; error: BackendError };

/** How a `subscriptions/listen` stream ended. */
export type ListenEnd = 'completed' | 'ended' | 'not-supported';

/** Callbacks of {@link ModernChannel.listen}. */
export interface ListenCallbacks {
  /** The backend acknowledged the stream; `kinds` are the list kinds it honours. */
  onAcknowledged(kinds: ReadonlySet<ListKind>): void;
  /** One item after the acknowledgement, with this stream's subscription id (not validated). */
  onEvent(item: BackendStreamItem): void;
  /** A message that does not belong to this stream (another or no subscription id). */
  onForeignEvent(reason: string): void;
}

const LISTEN_FILTER_MEMBER: ReadonlyArray<[ListKind, string]> = [
  ['tools', 'toolsListChanged'],
  ['prompts', 'promptsListChanged'],
  ['resources', 'resourcesListChanged'],
];

/** The 2026-07-28 channel to one backend; see the file comment. */
export class ModernChannel extends BackendChannel {
  /** Where every message of this era goes: no session, the 2026-07-28 version. */
  get route(): BackendRoute {
    return { endpoint: this.endpoint, protocolVersion: MODERN_PROTOCOL_VERSION };
  }

  /**
   * Sends `server/discover`. Resolves `modern`, `legacy` or `unknown` (see the file comment);
   * rejects with the connection failure when there was no answer or the credentials were
   * refused.
   */
  async probe(id: number, signal: AbortSignal): Promise<EraProbe> {
    let response: JsonRpcResponse;
    try {
      ({ response } = await this.exchange(
        this.route,
        withModernEnvelope({ jsonrpc: '2.0', id, method: 'server/discover' }, {}),
        { signals: [signal] },
      ));
    } catch (error) {
      if (!(error instanceof BackendError)) throw error;
      const failure = error.options.transport?.failure;
      if (failure === 'refused' || failure === 'not-found' || failure === 'not-supported') {
        return { era: 'legacy', reason: `server/discover ${error.detail}` };
      }
      if (failure === 'server-error' || error.reason === 'malformed-response') {
        return { era: 'unknown', reason: `server/discover ${error.detail}`, error };
      }
      throw error;
    }
    if ('error' in response) {
      return { era: 'legacy', reason: `server/discover failed: ${response.error.message}` };
    }
    const { supportedVersions, capabilities, ttlMs } = response.result;
    const versions = Array.isArray(supportedVersions)
      ? supportedVersions.filter((v): v is string => typeof v === 'string')
      : [];
    if (!versions.includes(MODERN_PROTOCOL_VERSION)) {
      return {
        era: 'legacy',
        reason: `server/discover offers ${versions.join(', ') || 'nothing'}`,
      };
    }
    return {
      era: 'modern',
      discovery: {
        capabilities: isPlainObject(capabilities) ? capabilities : {},
        supportedVersions: versions,
        ...(typeof ttlMs === 'number' ? { ttlMs } : {}),
      },
    };
  }

  /**
   * One stateless request: `message` in the envelope (`clientCapabilities` as given). Resolves
   * with the backend's response (result or error); rejects with a BackendError, or the caller's
   * abort reason.
   */
  async request(
    message: JsonRpcRequest,
    clientCapabilities: Record<string, unknown>,
    options: ChannelRequestOptions = {},
  ): Promise<JsonRpcResponse> {
    const { response } = await this.exchange(
      this.route,
      withModernEnvelope(message, clientCapabilities),
      options,
    );
    return response;
  }

  /**
   * POSTs a client's call in the envelope (never sent twice) and resolves with the reply once
   * it begins; the caller reads it (a 4xx JSON-RPC error is its one message). Closing the reply
   * cancels the call. Rejects with a BackendError.
   */
  async call(
    message: JsonRpcRequest,
    clientCapabilities: Record<string, unknown>,
    options: {
      signal: AbortSignal;
      mirroredParams?: readonly ParamHeaderDeclaration[];
      /** The call's trace context (`traceparent`, `tracestate`), when it is traced. */
      traceContext?: Readonly<Record<string, string>>;
      /** A person's endpoint (their credential, spec §11); default the backend's own. */
      endpoint?: BackendEndpoint;
    },
  ): Promise<BackendReply> {
    const outgoing = outgoingOf(withModernEnvelope(message, clientCapabilities));
    const route =
      options.endpoint === undefined ? this.route : { ...this.route, endpoint: options.endpoint };
    try {
      return await this.transport.send(route, outgoing, {
        signal: options.signal,
        replayable: false,
        mirroredParams: options.mirroredParams,
        traceContext: options.traceContext,
      });
    } catch (error) {
      throw backendFailure(this.backend, error, false);
    }
  }

  /**
   * Opens a `subscriptions/listen` stream for `kinds` and reads it until it ends or `signal`
   * aborts. `openDeadlineMs` limits the wait for the stream and its acknowledgement. Resolves
   * `completed` (the backend closed it with its final result), `ended` (closed without one, or
   * aborted) or `not-supported` (the backend has no listen: a refusal or a JSON-RPC -32601);
   * rejects when the stream is refused, not acknowledged in time, or breaks.
   */
  async listen(
    id: number,
    kinds: ReadonlySet<ListKind>,
    signal: AbortSignal,
    callbacks: ListenCallbacks,
    openDeadlineMs: number = this.requestTimeoutMs,
  ): Promise<ListenEnd> {
    const notifications: Record<string, boolean> = {};
    for (const [kind, member] of LISTEN_FILTER_MEMBER) {
      if (kinds.has(kind)) notifications[member] = true;
    }
    const message = withModernEnvelope(
      { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications } },
      {},
    );
    const notAcknowledged = () =>
      new BackendError(
        this.backend,
        'malformed-response',
        `MCP server "${this.backend}" did not acknowledge subscriptions/listen within ${openDeadlineMs} ms`,
        { statusDetail: `did not acknowledge subscriptions/listen within ${openDeadlineMs} ms` },
      );
    const scope = requestSignal([signal], openDeadlineMs);
    let reply: BackendReply;
    try {
      reply = await this.transport.send(this.route, outgoingOf(message), { signal: scope.signal });
    } catch (error) {
      scope.release();
      const failed = this.failure(error, scope, 'timed out', false);
      const failure =
        failed instanceof BackendError ? failed.options.transport?.failure : undefined;
      if (failure === 'not-found' || failure === 'not-supported') return 'not-supported';
      throw failed;
    }
    let acknowledged = false;
    try {
      for await (const item of reply) {
        if (signal.aborted) return 'ended';
        const parsed = item.type === 'message' ? classifyJsonRpc(item.parsed.message) : undefined;
        if (!acknowledged) {
          if (parsed?.kind === 'response' && 'error' in parsed.message) {
            if (parsed.message.error.code === -32601) return 'not-supported';
            if (reply.single || parsed.message.id === id) {
              throw new BackendRpcError(this.backend, parsed.message.error);
            }
          }
          const honoured = acknowledgedKinds(parsed, id);
          if (!honoured) {
            throw this.listenRefused(
              reply.single
                ? 'refused subscriptions/listen'
                : 'did not acknowledge subscriptions/listen with its first message',
            );
          }
          acknowledged = true;
          // From here on the stream may stay silent for as long as it likes.
          scope.stopTimer();
          callbacks.onAcknowledged(honoured);
          continue;
        }
        if (parsed?.kind === 'response' && parsed.message.id === id) return 'completed';
        const subscription =
          parsed?.kind === 'notification' && isPlainObject(parsed.message.params?._meta)
            ? parsed.message.params._meta[ModernMetaKey.subscriptionId]
            : undefined;
        if (parsed?.kind === 'notification' && subscription !== id) {
          callbacks.onForeignEvent('notification without this stream’s subscription id');
          continue;
        }
        callbacks.onEvent(item);
      }
    } catch (error) {
      if (error instanceof BackendError || error instanceof BackendRpcError) throw error;
      if (signal.aborted) return 'ended';
      if (!acknowledged) throw notAcknowledged();
      const tooLarge = (error as { failure?: unknown })?.failure === 'too-large';
      if (tooLarge) this.misbehaviours.record('oversizedMessages');
      throw this.listenRefused(
        tooLarge
          ? 'sent an oversized event on subscriptions/listen'
          : 'subscriptions/listen stream broke',
      );
    } finally {
      scope.release();
      reply.close();
    }
    if (!acknowledged && !signal.aborted) {
      throw reply.single ? this.listenRefused('refused subscriptions/listen') : notAcknowledged();
    }
    return 'ended';
  }

  private listenRefused(detail: string): BackendError {
    return new BackendError(
      this.backend,
      'malformed-response',
      `MCP server "${this.backend}" ${detail}`,
      {
        statusDetail: detail,
      },
    );
  }
}

/**
 * `message` with the per-request `_meta` of 2026-07-28: the protocol version, the given client
 * capabilities and the broker's clientInfo (other `_meta` members, e.g. a progress token, kept).
 */
export function withModernEnvelope(
  message: JsonRpcRequest,
  clientCapabilities: Record<string, unknown>,
): JsonRpcRequest {
  const params = message.params ?? {};
  const meta = isPlainObject(params._meta) ? params._meta : {};
  return {
    ...message,
    params: {
      ...params,
      _meta: {
        ...meta,
        [ModernMetaKey.protocolVersion]: MODERN_PROTOCOL_VERSION,
        [ModernMetaKey.clientCapabilities]: clientCapabilities,
        [ModernMetaKey.clientInfo]: { ...BROKER_IMPLEMENTATION },
      },
    },
  };
}

/** The kinds an acknowledgement of listen `id` honours, or undefined when it is not one. */
function acknowledgedKinds(
  parsed: ReturnType<typeof classifyJsonRpc>,
  id: number,
): Set<ListKind> | undefined {
  if (
    parsed?.kind !== 'notification' ||
    parsed.message.method !== 'notifications/subscriptions/acknowledged'
  ) {
    return undefined;
  }
  const params = parsed.message.params ?? {};
  const meta = isPlainObject(params._meta) ? params._meta : {};
  if (meta[ModernMetaKey.subscriptionId] !== id) return undefined;
  const honoured = isPlainObject(params.notifications) ? params.notifications : {};
  const kinds = new Set<ListKind>();
  for (const [kind, member] of LISTEN_FILTER_MEMBER) {
    if (honoured[member] === true) kinds.add(kind);
  }
  return kinds;
}
