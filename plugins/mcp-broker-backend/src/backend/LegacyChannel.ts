/*
 * LegacyChannel: MCP 2025-11-25 (and 2025-06-18, 2025-03-26) towards one backend, over its
 * BackendTransport: the one place where the session era's handshake, sessions and their rules
 * are written. It serves both the broker's own connection (BackendConnection: lists, requests,
 * the event stream) and the clients' tool calls (a session per client session and backend,
 * created lazily: `sessionFor`).
 *
 *   - handshake: `initialize` with the broker's clientInfo and the capabilities the session
 *     declares, a supported protocol version in the answer, then `notifications/initialized`;
 *   - sessions of clients: one per (owner, backend), where the owner is a client session or a
 *     stateless caller's pool key. Concurrent first calls share one handshake; a failed one is
 *     forgotten so the next call retries; a session the backend forgot (`session-lost`) is
 *     dropped (`forget`) and the call that found out runs once more on a fresh one — only when
 *     nothing of it ran (the 404 came before any answer). Sessions end (DELETE) with their
 *     owner, when the backend is removed, and on shutdown;
 *   - a call (`call`) is a `tools/call` POSTed on the session and never sent twice; its reply is
 *     the caller's to read; its cancellation is `notifications/cancelled` with its id;
 *   - the backend's server-to-client requests are answered on the session with their own raw
 *     id (`respond`).
 * Failures are BackendError / BackendRpcError (backendErrors.ts).
 */
import {
  isPlainObject,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import { withoutTasks } from '../protocol/modernResults';
import { supportsTaskCalls } from '../protocol/legacyTasks';
import {
  BROKER_IMPLEMENTATION,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
} from '../protocol/versions';
import { BackendError, backendFailure, BackendRpcError } from './backendErrors';
import {
  BackendTransportError,
  type BackendEndpoint,
  type BackendReply,
  type BackendRoute,
  type BackendTransport,
} from './backendTransport';
import { BackendChannel, ChannelAnswer, ChannelRequestOptions, outgoingOf } from './BackendChannel';
import { requestSignal } from './requestSignal';
import type { BackendMisbehaviours } from './BackendMisbehaviours';

/** An initialized backend session (or the backend's session-less answer to `initialize`). */
export interface LegacySession {
  /** `Mcp-Session-Id` the backend assigned; undefined for a backend without sessions. */
  readonly id?: string;
  /** The protocol version the backend agreed to. */
  readonly protocolVersion: string;
  /** The backend's capabilities (without the tasks extension). */
  readonly capabilities: Record<string, unknown>;
  /** The backend declared task-augmented `tools/call` (the 2025-11-25 `tasks` capability). */
  readonly taskCalls?: boolean;
  /**
   * Where this session's messages go when it is a person's (their credential, spec §11): set
   * when it opens and renewed by `sessionFor` with their latest credential (an exchanged token
   * refreshed). Absent: the channel's endpoint (the server's static headers).
   */
  endpoint?: BackendEndpoint;
}

/** What a message of a session is routed by. */
type SessionRouting = Partial<Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>>;

/** A client's answer to a backend's server-to-client request. */
export interface BackendAnswer {
  result?: unknown;
  error?: unknown;
}

/** Longest wait for the DELETE of a session (the backend may already be gone). */
const MAX_DELETE_WAIT_MS = 2_000;

interface PooledSession {
  readonly owner: string;
  readonly session: Promise<LegacySession>;
}

/** The 2025-11-25 channel to one backend; see the file comment. */
export class LegacyChannel extends BackendChannel {
  private readonly pool = new Map<string, PooledSession>();

  constructor(
    endpoint: BackendEndpoint,
    transport: BackendTransport,
    requestTimeoutMs: number,
    misbehaviours?: BackendMisbehaviours,
    private readonly clientInfo: { name: string; version: string } = BROKER_IMPLEMENTATION,
  ) {
    super(endpoint, transport, requestTimeoutMs, misbehaviours);
  }

  /** Where a message of `session` goes. */
  route(session: SessionRouting): BackendRoute {
    return {
      endpoint: session.endpoint ?? this.endpoint,
      sessionId: session.id,
      protocolVersion: session.protocolVersion,
    };
  }

  /**
   * The handshake: `initialize` declaring `capabilities`, then `notifications/initialized`.
   * Rejects with BackendRpcError when the backend refuses, BackendError otherwise.
   */
  async open(
    capabilities: Record<string, unknown>,
    signals: ReadonlyArray<AbortSignal | undefined> = [],
    endpoint?: BackendEndpoint,
  ): Promise<LegacySession> {
    const { response, sessionId } = await this.request(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities,
          clientInfo: this.clientInfo,
        },
      },
      endpoint === undefined ? {} : { endpoint },
      { signals },
    );
    if ('error' in response) throw new BackendRpcError(this.backend, response.error);
    const protocolVersion = response.result.protocolVersion;
    if (!isSupportedProtocolVersion(protocolVersion)) {
      throw this.protocolError(
        `speaks unsupported protocol version ${String(protocolVersion).slice(0, 40)}`,
      );
    }
    const session: LegacySession = {
      id: sessionId,
      protocolVersion,
      capabilities: isPlainObject(response.result.capabilities)
        ? withoutTasks(response.result.capabilities)
        : {},
      ...(isPlainObject(response.result.capabilities) &&
        supportsTaskCalls(response.result.capabilities) && { taskCalls: true }),
      ...(endpoint === undefined ? {} : { endpoint }),
    };
    await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session, { signals });
    return session;
  }

  /**
   * Sends a request on `session` (`{}` before the handshake) and resolves with its response,
   * whether the backend answers with JSON or with a stream (other messages on that stream go to
   * `onServerMessage`).
   */
  request(
    message: JsonRpcRequest,
    session: SessionRouting,
    options: ChannelRequestOptions = {},
  ): Promise<ChannelAnswer> {
    return this.exchange(this.routeOf(session), message, options);
  }

  /** Sends a notification or a response on `session`; the backend takes it without an answer. */
  send(
    message: JsonRpcNotification | JsonRpcResponse,
    session: SessionRouting,
    options: { signals?: ReadonlyArray<AbortSignal | undefined>; timeoutMs?: number } = {},
  ): Promise<void> {
    return this.deliver(this.routeOf(session), outgoingOf(message), options);
  }

  /**
   * Opens the session's event stream. Resolves with it, or with `'not-supported'` when the
   * backend offers none. `headerDeadlineMs` (default: the request timeout) limits only the wait
   * for the stream to open, and a stream that misses it fails saying so; the stream lives until
   * `signal` aborts, the backend ends it, or the caller closes it.
   */
  async openEventStream(
    session: Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>,
    signal: AbortSignal,
    headerDeadlineMs?: number,
  ): Promise<BackendReply | 'not-supported'> {
    const scope = requestSignal([signal], headerDeadlineMs ?? this.requestTimeoutMs);
    let reply: BackendReply;
    try {
      reply = await this.transport.openEvents(this.route(session), scope.signal);
    } catch (error) {
      scope.release();
      if (error instanceof BackendTransportError && error.failure === 'not-supported') {
        return 'not-supported';
      }
      throw this.failure(
        error,
        scope,
        headerDeadlineMs === undefined
          ? 'timed out'
          : `the event stream did not open within ${headerDeadlineMs} ms`,
        false,
      );
    }
    // The stream's tie to `signal` ends with the stream, not with this call.
    scope.stopTimer();
    reply.onClose(() => scope.release());
    return reply;
  }

  /** Ends the session on the backend (best effort, short timeout). */
  async endSession(
    session: Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>,
  ): Promise<void> {
    if (session.id === undefined) return;
    const scope = requestSignal([], Math.min(this.requestTimeoutMs, MAX_DELETE_WAIT_MS));
    try {
      await this.transport.endSession(this.route(session), scope.signal);
    } catch {
      // The backend may already be gone; its session then expires there.
    } finally {
      scope.release();
    }
  }

  /**
   * POSTs a client's call on `session` (never sent twice), with the call's trace context when it
   * is traced, and resolves with the reply once it begins; the caller reads it. Rejects with a
   * BackendError (`session-lost` when the backend no longer knows the session: nothing ran).
   */
  async call(
    session: LegacySession,
    message: JsonRpcRequest,
    signal: AbortSignal,
    traceContext?: Readonly<Record<string, string>>,
  ): Promise<BackendReply> {
    try {
      return await this.transport.send(this.route(session), outgoingOf(message), {
        signal,
        replayable: false,
        traceContext,
      });
    } catch (error) {
      throw backendFailure(this.backend, error, false);
    }
  }

  /**
   * Answers the backend's server-to-client request `rawId` on `session` (its id spliced in as
   * its original JSON token, so `7.5` stays a float and `"7"` a string).
   */
  async respond(
    session: Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>,
    rawId: RawJsonRpcId,
    answer: BackendAnswer,
    options: { signals?: ReadonlyArray<AbortSignal | undefined>; timeoutMs?: number } = {},
  ): Promise<void> {
    await this.deliver(this.route(session), { text: responseWithRawId(rawId, answer) }, options);
  }

  /** Tells the backend that the call `requestId` of `session` is cancelled. */
  async cancel(
    session: Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>,
    requestId: number,
    reason: string,
    waitMs: number,
  ): Promise<void> {
    await this.send(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } },
      session,
      { timeoutMs: waitMs },
    );
  }

  /**
   * The backend session of `owner` (a client session, or a stateless caller's pool key),
   * opened with the relayed client capabilities on first use. Concurrent callers share one
   * handshake; a failed one is forgotten.
   */
  sessionFor(
    owner: string,
    capabilities: RelayedClientCapabilities,
    endpoint?: BackendEndpoint,
  ): Promise<LegacySession> {
    const existing = this.pool.get(owner);
    if (existing) {
      if (endpoint === undefined) return existing.session;
      // The session is this person's: its messages go with their latest credential.
      return existing.session.then(session => {
        if (!sameHeaders(session.endpoint?.headers, endpoint.headers)) session.endpoint = endpoint;
        return session;
      });
    }
    const session = this.openFor(capabilities, endpoint);
    const entry: PooledSession = { owner, session };
    this.pool.set(owner, entry);
    session.catch(() => {
      if (this.pool.get(owner) === entry) this.pool.delete(owner);
    });
    return session;
  }

  /**
   * Forgets a session of `owner` the backend no longer knows, so that the next `sessionFor`
   * opens a fresh one. A newer session is left alone.
   */
  async forget(owner: string, session: LegacySession): Promise<void> {
    const entry = this.pool.get(owner);
    if (!entry) return;
    const current = await entry.session.catch(() => undefined);
    if (current === session && this.pool.get(owner) === entry) this.pool.delete(owner);
  }

  /**
   * The endpoint of `owner`'s backend session `sessionId` when that session is open here and is
   * a person's (spec §11: their answers go with their credential); undefined otherwise (the
   * channel's endpoint then applies).
   */
  async personalEndpointOf(
    owner: string,
    sessionId: string | undefined,
  ): Promise<BackendEndpoint | undefined> {
    const entry = this.pool.get(owner);
    if (entry === undefined) return undefined;
    const session = await entry.session.catch(() => undefined);
    return session !== undefined && session.id === sessionId ? session.endpoint : undefined;
  }

  /** True when `owner` has a session here (or one being opened). */
  hasSessionOf(owner: string): boolean {
    return this.pool.has(owner);
  }

  /** Number of clients' sessions (including ones being opened). */
  get sessionCount(): number {
    return this.pool.size;
  }

  /** Ends the session of `owner`. */
  async closeSessionOf(owner: string): Promise<void> {
    const entry = this.pool.get(owner);
    if (entry === undefined) return;
    this.pool.delete(owner);
    await this.endPooled(entry);
  }

  /** Ends every client's session (backend removed, shutdown). */
  async closeSessions(): Promise<void> {
    const entries = [...this.pool.values()];
    this.pool.clear();
    await Promise.all(entries.map(entry => this.endPooled(entry)));
  }

  private async endPooled(entry: PooledSession): Promise<void> {
    const session = await entry.session.catch(() => undefined);
    if (session) await this.endSession(session);
  }

  /** The handshake of a client's session: the relayed capabilities only, as declared. */
  private async openFor(
    capabilities: RelayedClientCapabilities,
    endpoint?: BackendEndpoint,
  ): Promise<LegacySession> {
    const declared: RelayedClientCapabilities = {};
    if (capabilities.elicitation !== undefined) declared.elicitation = capabilities.elicitation;
    if (capabilities.sampling !== undefined) declared.sampling = capabilities.sampling;
    if (capabilities.roots !== undefined) declared.roots = capabilities.roots;
    if (capabilities.extensions !== undefined) declared.extensions = capabilities.extensions;
    try {
      return await this.open(declared as Record<string, unknown>, [], endpoint);
    } catch (error) {
      if (error instanceof BackendRpcError) {
        throw new BackendError(
          this.backend,
          'malformed-response',
          `MCP server "${this.backend}" refused to initialize a session: ${error.error.message}`,
        );
      }
      throw error;
    }
  }

  private routeOf(session: SessionRouting): BackendRoute {
    return this.route(session);
  }
}

function sameHeaders(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>>,
): boolean {
  if (a === undefined) return false;
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every(name => a[name] === b[name]);
}

/**
 * A JSON-RPC response to a backend's request, with the backend's id spliced in as its original
 * JSON token, so that `7.5` stays a float, `7` an integer and `"7"` a string.
 */
export function responseWithRawId(rawId: RawJsonRpcId, answer: BackendAnswer): string {
  const member =
    answer.error !== undefined
      ? `"error":${JSON.stringify(answer.error)}`
      : `"result":${JSON.stringify(answer.result ?? {})}`;
  return `{"jsonrpc":"2.0","id":${rawId},${member}}`;
}

/** A client's session at a backend, as a call knows it: where to answer, cancel and close. */
export interface LegacySessionRef {
  readonly channel: LegacyChannel;
  readonly session: Pick<LegacySession, 'id' | 'protocolVersion' | 'endpoint'>;
}
