/*
 * ModernBackendClient: the wire of MCP 2026-07-28 (stateless) towards one backend, for the
 * broker's own connection (BackendConnection). It sits on StreamableHttpClient (the same
 * transport, the same error vocabulary) and adds what the stateless revision asks of a client
 * (docs/mcp-2026-07-28-notes.md §1–§3, §8):
 *   - every request carries the per-request `_meta` (protocol version, client capabilities,
 *     clientInfo; a `_meta` already in the params, e.g. a progress token, is kept) and the
 *     headers that mirror the body: `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for
 *     `tools/call`, `prompts/get` (`params.name`) and `resources/read` (`params.uri`), Base64-
 *     sentinel-encoded when not plain ASCII. The name is taken from the params as sent, so a
 *     caller that rewrote the name in the body (prefix removed) rewrote the header with it;
 *   - era detection: `server/discover` first. A result that lists 2026-07-28 means modern; any
 *     other answer of the backend (a JSON-RPC error, a 4xx) means "not this revision", and the
 *     caller falls back to the legacy handshake. A 5xx or a 2xx that is no MCP message is
 *     ambiguous (some 2025-11-25 servers answer an unknown method with 500): the caller tries
 *     the legacy handshake, and only its success decides. 401/403 (credentials), timeouts and
 *     network errors are evidence of neither: they are thrown, like any connection failure,
 *     without a second doomed request;
 *   - `subscriptions/listen`: POSTed, answered with an event stream whose first message must be
 *     the acknowledgement tagged with the listen id (else the stream is refused); later events
 *     are handed to the caller unparsed (it validates them as it validates GET stream events),
 *     once their subscription id matches. The backend's closing result ends the stream.
 * Holds no state between requests.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import type { BrokerBackend } from '../types';
import {
  classifyJsonRpc,
  isPlainObject,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonRpc';
import { ListKind } from '../protocol/listKinds';
import { MCP_NAME_SOURCE, ModernHeader, ModernMetaKey } from '../protocol/modernEra';
import { encodeMcpHeaderValue } from '../protocol/requestMetadata';
import { BROKER_IMPLEMENTATION, MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import { BackendProtocolError, BackendRpcError, BackendUnavailableError } from './backendErrors';
import { MAX_SSE_EVENT_BYTES, readSseEvents, isSseEventTooLarge } from './sseReader';
import type {
  BackendRequestOptions,
  BackendSession,
  StreamableHttpClient,
} from './StreamableHttpClient';

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
 * refusal (a 5xx, a 2xx that is no MCP message); `error` is that answer, for the caller to
 * report if the legacy handshake fails too.
 */
export type EraProbe =
  | { era: 'modern'; discovery: ModernDiscovery }
  | { era: 'legacy'; reason: string }
  | { era: 'unknown'; reason: string; error: BackendUnavailableError };

/** How a `subscriptions/listen` stream ended. */
export type ListenEnd = 'completed' | 'ended' | 'not-supported';

/** Callbacks of {@link ModernBackendClient.listen}. */
export interface ListenCallbacks {
  /** The backend acknowledged the stream; `kinds` are the list kinds it honours. */
  onAcknowledged(kinds: ReadonlySet<ListKind>): void;
  /** One event after the acknowledgement, with this stream's subscription id (not validated). */
  onEvent(event: EventSourceMessage): void;
  /** An event that does not belong to this stream (another or no subscription id). */
  onForeignEvent(reason: string): void;
}

const LISTEN_FILTER_MEMBER: ReadonlyArray<[ListKind, string]> = [
  ['tools', 'toolsListChanged'],
  ['prompts', 'promptsListChanged'],
  ['resources', 'resourcesListChanged'],
];

/** Speaks MCP 2026-07-28 to one backend with the broker's own credentials. */
export class ModernBackendClient {
  constructor(
    private readonly backend: BrokerBackend,
    private readonly http: StreamableHttpClient,
    private readonly ackTimeoutMs: number,
  ) {}

  /**
   * Sends `server/discover`. Resolves `modern`, `legacy` or `unknown` (see the file comment);
   * rejects with the connection failure when there was no answer or the credentials were
   * refused.
   */
  async probe(id: number, signal: AbortSignal): Promise<EraProbe> {
    let response: JsonRpcResponse;
    try {
      response = await this.request(
        { jsonrpc: '2.0', id, method: 'server/discover' },
        {},
        { signals: [signal] },
      );
    } catch (error) {
      if (error instanceof BackendRpcError) {
        return { era: 'legacy', reason: `server/discover failed: ${error.error.message}` };
      }
      const status = error instanceof BackendUnavailableError ? error.status : undefined;
      if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403)
        return { era: 'legacy', reason: `server/discover answered HTTP ${status}` };
      if (
        error instanceof BackendProtocolError ||
        (error instanceof BackendUnavailableError && status !== undefined && status >= 500)
      ) {
        const reason =
          status === undefined ? error.detail : `server/discover answered HTTP ${status}`;
        return { era: 'unknown', reason, error };
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
   * One stateless request: `message` with the per-request `_meta` (`clientCapabilities` as
   * given) and the mirroring headers. Resolves with the backend's response (result or error);
   * rejects like StreamableHttpClient.request.
   */
  async request(
    message: JsonRpcRequest,
    clientCapabilities: Record<string, unknown>,
    options: BackendRequestOptions,
  ): Promise<JsonRpcResponse> {
    const modern = withModernEnvelope(message, clientCapabilities);
    const { response } = await this.http.request(modern, modernRequestHeaders(modern), options);
    return response;
  }

  /**
   * Opens a `subscriptions/listen` stream for `kinds` and reads it until it ends or `signal`
   * aborts. Resolves `completed` (the backend closed it with its final result), `ended` (closed
   * without one, or aborted) or `not-supported` (the backend has no listen: HTTP 404/405 or a
   * JSON-RPC -32601); rejects when the stream is refused, not acknowledged in time, or breaks.
   */
  async listen(
    id: number,
    kinds: ReadonlySet<ListKind>,
    signal: AbortSignal,
    callbacks: ListenCallbacks,
  ): Promise<ListenEnd> {
    const notifications: Record<string, boolean> = {};
    for (const [kind, member] of LISTEN_FILTER_MEMBER) {
      if (kinds.has(kind)) notifications[member] = true;
    }
    const message = withModernEnvelope(
      { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications } },
      {},
    );
    let response;
    try {
      response = await this.http.openPostStream(message, modernRequestHeaders(message), signal);
    } catch (error) {
      if (error instanceof BackendRpcError && error.error.code === -32601) return 'not-supported';
      if (
        error instanceof BackendUnavailableError &&
        (error.status === 404 || error.status === 405)
      ) {
        return 'not-supported';
      }
      throw error;
    }
    if (!response.isEventStream) {
      const error = jsonRpcErrorText(await response.text(4096).catch(() => ''));
      if (error?.code === -32601) return 'not-supported';
      throw new BackendUnavailableError(
        this.backend.name,
        `refused subscriptions/listen${error ? `: ${error.message.slice(0, 200)}` : ''}`,
      );
    }
    let acknowledged = false;
    const notAcknowledged = () =>
      new BackendUnavailableError(
        this.backend.name,
        `did not acknowledge subscriptions/listen within ${this.ackTimeoutMs} ms`,
      );
    const ackTimer = setTimeout(() => {
      if (!acknowledged) response.close();
    }, this.ackTimeoutMs);
    ackTimer.unref?.();
    try {
      for await (const event of readSseEvents(response.body, {
        maxEventSize: MAX_SSE_EVENT_BYTES,
        signal,
      })) {
        if (signal.aborted) return 'ended';
        if (event.event !== undefined && event.event !== 'message') continue;
        const parsed = parseMessage(event.data);
        if (!acknowledged) {
          if (parsed?.kind === 'response' && parsed.message.id === id && 'error' in parsed.message)
            throw new BackendRpcError(this.backend.name, parsed.message.error);
          const honoured = acknowledgedKinds(parsed, id);
          if (!honoured) {
            throw new BackendUnavailableError(
              this.backend.name,
              'did not acknowledge subscriptions/listen with its first message',
            );
          }
          acknowledged = true;
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
        callbacks.onEvent(event);
      }
    } catch (error) {
      if (signal.aborted && !isSseEventTooLarge(error)) return 'ended';
      if (error instanceof BackendUnavailableError || error instanceof BackendRpcError) throw error;
      if (!acknowledged) throw notAcknowledged();
      throw new BackendUnavailableError(
        this.backend.name,
        isSseEventTooLarge(error)
          ? 'sent an oversized event on subscriptions/listen'
          : 'subscriptions/listen stream broke',
      );
    } finally {
      clearTimeout(ackTimer);
      response.close();
    }
    if (!acknowledged && !signal.aborted) throw notAcknowledged();
    return 'ended';
  }
}

/**
 * The headers of one 2026-07-28 request (the body's method and name mirrored): `Mcp-Method`, and
 * `Mcp-Name` from the params as sent (so a name rewritten in the body is rewritten here too).
 */
export function modernRequestHeaders(message: JsonRpcRequest): BackendSession {
  const headers: Record<string, string> = { [ModernHeader.method]: message.method };
  const source = MCP_NAME_SOURCE[message.method];
  const name = source === undefined ? undefined : message.params?.[source];
  if (typeof name === 'string') headers[ModernHeader.name] = encodeMcpHeaderValue(name);
  return { protocolVersion: MODERN_PROTOCOL_VERSION, headers };
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

function parseMessage(data: string): ReturnType<typeof classifyJsonRpc> {
  try {
    return classifyJsonRpc(JSON.parse(data));
  } catch {
    return undefined;
  }
}

function jsonRpcErrorText(text: string): { code: number; message: string } | undefined {
  const parsed = parseMessage(text);
  return parsed?.kind === 'response' && 'error' in parsed.message
    ? parsed.message.error
    : undefined;
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
