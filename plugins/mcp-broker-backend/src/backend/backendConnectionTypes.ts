/*
 * What a BackendConnection shows its owner: its state and status for the status endpoint, the
 * lists it caches, and what changed after a (re-)listing. Shared by the connection, the broker,
 * the aggregated catalog and the list methods, none of which needs the connection's code for it.
 */
import type { ListKind } from '../protocol/listKinds';
import type { ProtocolEra } from '../protocol/modernEra';
import type { EventStreamMode } from './BackendEventStream';
import type { MisbehaviourCounts } from './BackendMisbehaviours';
import type { ListTruncation } from './pagedList';

/** State of a backend connection, as shown on the status endpoint. */
export type BackendConnectionState =
  'connecting' | 'connected' | 'backing-off' | 'failed' | 'closed';

/** One backend's cached lists (items as the backend sent them, names unprefixed). */
export interface BackendLists {
  tools: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  resourceTemplates: Record<string, unknown>[];
  prompts: Record<string, unknown>[];
}

/** What a BackendConnection tells its owner after (re-)listing. */
export interface ListsUpdate {
  /** Kinds whose cached list differs from before. */
  changedKinds: ReadonlySet<ListKind>;
  /** Kinds a valid backend event announced (forwarded to clients even if nothing differs). */
  eventKinds: ReadonlySet<ListKind>;
}

/** Status of one backend for the status endpoint. Contains no credentials. */
export interface BackendConnectionStatus {
  name: string;
  url: string;
  state: BackendConnectionState;
  eventStream: EventStreamMode;
  nextRetryAt?: string;
  lastConnectedAt?: string;
  lastEventAt?: string;
  lastError?: string;
  consecutiveFailures: number;
  droppedEvents: number;
  protocolVersion?: string;
  /** The protocol era the backend speaks, once detected (kept across failed attempts). */
  era?: ProtocolEra;
  /** When the era was last detected (every successful connection detects it again). */
  eraDetectedAt?: string;
  counts: { tools: number; resources: number; resourceTemplates: number; prompts: number };
  /**
   * The lists cut at the last listing (`mcpBroker.backendLimits`), by which bound: `items`
   * (only the first `maxListItems` are served) or `pages` (a cursor still open after
   * `maxListPages`). Empty when nothing was cut.
   */
  truncatedLists: Partial<Record<keyof BackendLists, ListTruncation>>;
  /** What the backend did wrong that the broker noticed: counts and last times, no payloads. */
  misbehaviours: MisbehaviourCounts;
}

/** The `ttlMs` a modern backend gave with each list (absent for legacy backends). */
export type BackendListTtls = Partial<Record<keyof BackendLists, number>>;
