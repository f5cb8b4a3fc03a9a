/*
 * Backend sessions held on behalf of client sessions.
 *
 * One backend session per (client session, backend), created lazily at the client's first call
 * to that backend: it carries the broker's credentials for the backend and declares the client
 * capabilities the broker relays (elicitation, sampling, roots) as the client declared them, so
 * the backend asks this client — and only this client — for input. Concurrent first calls share
 * the one in-flight initialization. A failed initialization is forgotten so the next call retries.
 * Sessions end (HTTP DELETE) with their client session, when their backend is removed, and on
 * shutdown.
 */
import { LoggerService } from '@backstage/backend-plugin-api';
import type {
  BackendEndpoint,
  BackendResponse,
  BackendSessionRef,
  BackendTransport,
} from './backendTransport';
import { HttpBackendTransport, readBackendMessages } from './HttpBackendTransport';
import {
  BackendCallError,
  backendFailure,
  backendHttpError,
  backendMalformedResponse,
  backendStreamEnded,
} from './backendErrors';
import { classifyJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import { BROKER_IMPLEMENTATION, LATEST_PROTOCOL_VERSION } from '../protocol/versions';

/** Options of {@link BackendSessionPool}. */
export interface BackendSessionPoolOptions {
  logger: LoggerService;
  /** Longest an initialize or DELETE towards a backend may take. */
  requestTimeoutMs: number;
  /** `clientInfo` the broker presents to backends. */
  clientInfo?: { name: string; version: string };
  /** How backends are reached; streamable HTTP unless a test or another era says otherwise. */
  transport?: BackendTransport;
}

interface PoolEntry {
  clientSessionId: string;
  backend: string;
  session: Promise<BackendSessionRef>;
  /** The session once initialized (its endpoint carries the latest credential of its person). */
  ready?: BackendSessionRef;
}

/** Lazily created backend sessions, one per (client session, backend). */
export class BackendSessionPool {
  private readonly entries = new Map<string, PoolEntry>();
  private readonly logger: LoggerService;
  private readonly requestTimeoutMs: number;
  private readonly clientInfo: { name: string; version: string };
  /** The transport the pool's sessions live on (the forwarder sends their calls over it). */
  readonly transport: BackendTransport;

  constructor(options: BackendSessionPoolOptions) {
    this.transport = options.transport ?? HttpBackendTransport.shared;
    this.logger = options.logger;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.clientInfo = options.clientInfo ?? BROKER_IMPLEMENTATION;
  }

  /**
   * The backend session for this client session, initializing it on first use. Concurrent
   * callers share one initialization.
   */
  acquire(
    clientSessionId: string,
    endpoint: BackendEndpoint,
    capabilities: RelayedClientCapabilities,
  ): Promise<BackendSessionRef> {
    const key = keyOf(clientSessionId, endpoint.name);
    const existing = this.entries.get(key);
    if (existing) {
      // A person's credential may have been renewed since the session began (an exchanged token
      // refreshed, spec §11): the session is that person's, so its requests carry the new one.
      return existing.session.then(session => {
        if (!sameHeaders(session.endpoint.headers, endpoint.headers)) session.endpoint = endpoint;
        return session;
      });
    }
    const session = this.initialize(endpoint, capabilities);
    const entry: PoolEntry = { clientSessionId, backend: endpoint.name, session };
    this.entries.set(key, entry);
    session.then(
      ready => {
        entry.ready = ready;
      },
      () => undefined,
    );
    session.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return session;
  }

  /**
   * Forgets a session the backend no longer knows (it answered 404), so that the next
   * {@link BackendSessionPool.acquire} initializes a fresh one. A newer session is left alone.
   */
  async invalidate(clientSessionId: string, session: BackendSessionRef): Promise<void> {
    const key = keyOf(clientSessionId, session.endpoint.name);
    const entry = this.entries.get(key);
    if (!entry) return;
    const current = await entry.session.catch(() => undefined);
    if (current === session && this.entries.get(key) === entry) this.entries.delete(key);
  }

  /**
   * The endpoint (with its headers) of this replica's initialized session for (client session,
   * backend), if any: answers to a backend's requests go with the credential its calls carry (a
   * person's, spec §11), not the server's static one.
   */
  endpointOf(clientSessionId: string, backend: string): BackendEndpoint | undefined {
    return this.entries.get(keyOf(clientSessionId, backend))?.ready?.endpoint;
  }

  /** Number of sessions (including ones being initialized), for the status page and tests. */
  size(): number {
    return this.entries.size;
  }

  /** Backends with a session (or one being initialized) for this client session. */
  backendsOf(clientSessionId: string): string[] {
    return [...this.entries.values()]
      .filter(e => e.clientSessionId === clientSessionId)
      .map(e => e.backend);
  }

  /** Ends every backend session of a client session. */
  async closeClientSession(clientSessionId: string): Promise<void> {
    await this.closeWhere(e => e.clientSessionId === clientSessionId);
  }

  /** Ends every session with a backend that was removed from the configuration. */
  async closeBackend(backend: string): Promise<void> {
    await this.closeWhere(e => e.backend === backend);
  }

  /** Ends every session (shutdown). */
  async closeAll(): Promise<void> {
    await this.closeWhere(() => true);
  }

  private async closeWhere(predicate: (entry: PoolEntry) => boolean): Promise<void> {
    const doomed: PoolEntry[] = [];
    for (const [key, entry] of this.entries) {
      if (predicate(entry)) {
        this.entries.delete(key);
        doomed.push(entry);
      }
    }
    await Promise.all(
      doomed.map(async entry => {
        const session = await entry.session.catch(() => undefined);
        if (!session) return;
        try {
          await this.transport.deleteSession(session, AbortSignal.timeout(this.requestTimeoutMs));
        } catch (error) {
          // The backend may be gone already; its session dies with it.
          this.logger.debug(`Could not end a session with MCP server "${entry.backend}": ${error}`);
        }
      }),
    );
  }

  private async initialize(
    endpoint: BackendEndpoint,
    capabilities: RelayedClientCapabilities,
  ): Promise<BackendSessionRef> {
    const signal = AbortSignal.timeout(this.requestTimeoutMs);
    const declared: RelayedClientCapabilities = {};
    if (capabilities.elicitation !== undefined) declared.elicitation = capabilities.elicitation;
    if (capabilities.sampling !== undefined) declared.sampling = capabilities.sampling;
    if (capabilities.roots !== undefined) declared.roots = capabilities.roots;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: declared,
        clientInfo: this.clientInfo,
      },
    });
    let response: BackendResponse;
    try {
      response = await this.transport.post({ endpoint }, body, signal);
    } catch (error) {
      throw backendFailure(endpoint.name, error, false);
    }
    if (!response.ok) {
      response.discard();
      throw backendHttpError(endpoint.name, response.status);
    }
    const sessionId = response.header('mcp-session-id');
    let protocolVersion: string | undefined;
    try {
      for await (const item of readBackendMessages(response)) {
        if (item.type !== 'message' || classifyJsonRpcMessage(item.parsed) !== 'response') continue;
        if (item.parsed.message.id !== 1) continue;
        const { result, error } = item.parsed.message as {
          result?: { protocolVersion?: unknown };
          error?: { message?: unknown };
        };
        if (error !== undefined) {
          throw new BackendCallError(
            endpoint.name,
            'malformed-response',
            `MCP server "${endpoint.name}" refused to initialize a session: ${String(error?.message)}`,
          );
        }
        if (typeof result?.protocolVersion !== 'string') {
          throw backendMalformedResponse(
            endpoint.name,
            'an initialize result without protocolVersion',
          );
        }
        protocolVersion = result.protocolVersion;
        break;
      }
    } catch (error) {
      throw backendFailure(endpoint.name, error, true);
    }
    if (protocolVersion === undefined) throw backendStreamEnded(endpoint.name);
    const session: BackendSessionRef = { endpoint, sessionId, protocolVersion };
    try {
      const initialized = await this.transport.post(
        session,
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        signal,
      );
      initialized.discard();
      if (!initialized.ok) throw backendHttpError(endpoint.name, initialized.status);
    } catch (error) {
      throw backendFailure(endpoint.name, error, false);
    }
    return session;
  }
}

function keyOf(clientSessionId: string, backend: string): string {
  // Backend names are [a-z0-9-]+, so a NUL separator cannot be forged from either side.
  return `${clientSessionId}\u0000${backend}`;
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every(name => a[name] === b[name]);
}
