/*
 * Gateway ids for server-to-client requests (elicitation, sampling) that travel through the broker.
 *
 * A backend's request id is only unique within its own session, and the broker must never let a
 * client answer a request that was not sent to it. So every such request reaches the client with
 * a fresh gateway id `<server>:<128 random bits, base64url>`, and the mapping back to the backend's
 * id (kept as its raw JSON token, so `7.5` stays a float and `"7"` a string) lives here.
 *
 * Guarantees: a gateway id is answered at most once (the store claims atomically); only by the
 * client session it was sent to (a foreign claim leaves the entry intact); never after its expiry.
 * Entries disappear when their call ends (whatever the outcome), when the client session ends, and
 * at expiry (swept by the replica's ExpirySweeper). Storage is behind {@link ElicitationIdStore} so several replicas
 * can share it.
 */
import { randomBytes } from 'node:crypto';
import { RawJsonRpcId } from '../protocol/jsonRpcMessage';

/** What the broker remembers about one request it forwarded to a client. */
export interface ElicitationMapping {
  /** The id the client sees: `<server>:<random>`. */
  gatewayId: string;
  /** The backend's request id, as its exact JSON token. */
  backendRequestId: RawJsonRpcId;
  /** The backend's configured name. */
  backend: string;
  /** The backend session that asked (undefined for a stateless backend). */
  backendSessionId: string | undefined;
  /** The protocol version of that backend session, for the answer's headers. */
  protocolVersion: string;
  /** The client session that was asked; only it may answer. */
  clientSessionId: string;
  /** The tool call during which the request arrived. */
  callId: string;
  /** Epoch milliseconds after which the id is no longer answerable. */
  expiresAt: number;
  /**
   * An input of a task the broker carries between eras (docs/contracts/tasks-and-apps.md
   * §2.12.3): the broker task id, the backend's `inputRequests` key and who was asked. Absent
   * for a call's request.
   */
  task?: { taskId: string; backendInputKey: string; principal: string };
}

/**
 * Storage of {@link ElicitationMapping}s. Implementations must make
 * {@link ElicitationIdStore.claim} atomic: of any number of concurrent claims of one id (on any
 * replica), at most one returns the mapping.
 */
export interface ElicitationIdStore {
  insert(mapping: ElicitationMapping): Promise<void>;
  /**
   * Removes and returns the mapping if it exists, belongs to `clientSessionId` and has not expired
   * at `now`; otherwise returns undefined and changes nothing.
   */
  claim(
    gatewayId: string,
    clientSessionId: string,
    now: number,
  ): Promise<ElicitationMapping | undefined>;
  /**
   * Removes and returns the mapping whatever its session and expiry (atomically, like claim):
   * used when an id expires, so that exactly one party — a late answer or the expiry — wins.
   */
  take(gatewayId: string): Promise<ElicitationMapping | undefined>;
  /** Reads a mapping without claiming it (diagnostics and tests). */
  peek(gatewayId: string): Promise<ElicitationMapping | undefined>;
  deleteByCall(callId: string): Promise<void>;
  deleteByClientSession(clientSessionId: string): Promise<void>;
  deleteExpired(now: number): Promise<void>;
}

/** The single-process {@link ElicitationIdStore}. */
export class MemoryElicitationIdStore implements ElicitationIdStore {
  private readonly mappings = new Map<string, ElicitationMapping>();

  async insert(mapping: ElicitationMapping): Promise<void> {
    this.mappings.set(mapping.gatewayId, mapping);
  }

  async claim(gatewayId: string, clientSessionId: string, now: number) {
    // Check and delete happen in one synchronous step, which is atomic in one process.
    const mapping = this.mappings.get(gatewayId);
    if (!mapping || mapping.clientSessionId !== clientSessionId || mapping.expiresAt <= now) {
      return undefined;
    }
    this.mappings.delete(gatewayId);
    return mapping;
  }

  async take(gatewayId: string) {
    const mapping = this.mappings.get(gatewayId);
    this.mappings.delete(gatewayId);
    return mapping;
  }

  async peek(gatewayId: string) {
    return this.mappings.get(gatewayId);
  }

  async deleteByCall(callId: string) {
    this.deleteWhere(m => m.callId === callId);
  }

  async deleteByClientSession(clientSessionId: string) {
    this.deleteWhere(m => m.clientSessionId === clientSessionId);
  }

  async deleteExpired(now: number) {
    this.deleteWhere(m => m.expiresAt <= now);
  }

  private deleteWhere(predicate: (m: ElicitationMapping) => boolean) {
    for (const [id, mapping] of this.mappings) {
      if (predicate(mapping)) this.mappings.delete(id);
    }
  }
}

const GATEWAY_ID = /^[a-z0-9-]+:[A-Za-z0-9_-]{22,}$/;

/** Options of {@link ElicitationIdMap}. */
export interface ElicitationIdMapOptions {
  store?: ElicitationIdStore;
  /** Lifetime of a gateway id in milliseconds. */
  ttlMs: number;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
}

/** Issues, resolves and retires gateway ids; see the file comment. */
export class ElicitationIdMap {
  private readonly store: ElicitationIdStore;
  /** Lifetime of a gateway id in milliseconds. */
  readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: ElicitationIdMapOptions) {
    this.store = options.store ?? new MemoryElicitationIdStore();
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
  }

  /** Records a backend request and returns the gateway id to show the client. */
  async register(
    entry: Omit<ElicitationMapping, 'gatewayId' | 'expiresAt'>,
  ): Promise<ElicitationMapping> {
    const mapping: ElicitationMapping = {
      ...entry,
      gatewayId: `${entry.backend}:${randomBytes(16).toString('base64url')}`,
      expiresAt: this.now() + this.ttlMs,
    };
    await this.store.insert(mapping);
    return mapping;
  }

  /**
   * Claims a gateway id for an answer from `clientSessionId`: the mapping if the id is known,
   * unused, unexpired and was sent to that session; undefined otherwise (nothing changes then).
   */
  async claim(
    gatewayId: unknown,
    clientSessionId: string,
  ): Promise<ElicitationMapping | undefined> {
    if (!isGatewayId(gatewayId)) return undefined;
    return this.store.claim(gatewayId, clientSessionId, this.now());
  }

  /**
   * Retires an id whose time is up and returns its mapping, unless an answer claimed it first
   * (then undefined): the caller then tells the backend that no answer will come.
   */
  expire(gatewayId: string): Promise<ElicitationMapping | undefined> {
    return this.store.take(gatewayId);
  }

  /**
   * Puts back a mapping claimed by an answer that could not be passed on (the store failed
   * midway), so that the client's retry of the answer can claim it again.
   */
  restore(mapping: ElicitationMapping): Promise<void> {
    return this.store.insert(mapping);
  }

  /** Reads a mapping without claiming it. */
  peek(gatewayId: string): Promise<ElicitationMapping | undefined> {
    return this.store.peek(gatewayId);
  }

  /** Retires every id issued during a call (it completed, failed, timed out or was abandoned). */
  releaseCall(callId: string): Promise<void> {
    return this.store.deleteByCall(callId);
  }

  /** Retires every id of a client session that ended. */
  releaseClientSession(clientSessionId: string): Promise<void> {
    return this.store.deleteByClientSession(clientSessionId);
  }

  /** Removes the ids expired at `now` (the replica's ExpirySweeper calls it). */
  deleteExpired(now: number): Promise<void> {
    return this.store.deleteExpired(now);
  }
}

/** True when `id` has the shape of a gateway id (checked before any store is asked). */
export function isGatewayId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= 200 && GATEWAY_ID.test(id);
}
