/*
 * `mcpBroker.sessionStore`: where the broker keeps client sessions and elicitation ids, and the
 * stores that setting selects. Read once at start-up; a bad value fails start-up naming the key.
 */
import type { DatabaseService } from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import type { ElicitationIdStore } from '../calls/ElicitationIdMap';
import type { ClientSessionStore } from '../sessions/ClientSessionStore';
import { DatabaseClientSessionStore } from './DatabaseClientSessionStore';
import { DatabaseElicitationIdStore } from './DatabaseElicitationIdStore';
import { DatabaseTaskInputStore } from './DatabaseTaskInputStore';
import type { TaskInputStore } from '../tasks/TaskInputStore';
import { DatabaseRequestStateNonceStore } from './DatabaseRequestStateNonceStore';
import type { RequestStateNonceStore } from '../inputRequests/requestStateNonces';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import { DatabaseHeldCallStore } from './DatabaseHeldCallStore';
import type { SignalStore } from '../replicas/SignalBus';
import { DatabaseSignalStore } from './DatabaseSignalStore';
import type { PostgresNotifications } from './PostgresNotifications';
import type { QuotaStore } from '../rateLimits/RateLimiter';
import { DatabaseQuotaStore } from './DatabaseQuotaStore';
import { migrateBrokerDatabase } from './migrations';
import { ReplicaPresence } from '../replicas/ReplicaPresence';
import { DatabaseReplicaPresenceStore } from './DatabaseReplicaPresenceStore';
import type { TaskStore } from '../tasks/TaskStore';
import { DatabaseTaskStore } from './DatabaseTaskStore';

/** `memory`: one replica (the default); `database`: shared by every replica. */
export type SessionStoreKind = 'memory' | 'database';

/** Reads `mcpBroker.sessionStore` from the root config. */
export function readSessionStoreKind(config: Config): SessionStoreKind {
  const value = config.getOptionalString('mcpBroker.sessionStore') ?? 'memory';
  if (value !== 'memory' && value !== 'database') {
    throw new InputError(
      `Invalid mcpBroker.sessionStore "${value.slice(0, 40)}": use "memory" (one replica) or "database" (several replicas sharing the plugin's database)`,
    );
  }
  return value;
}

/** Reads `mcpBroker.signalNotifications` (default true; see config.d.ts). */
export function readSignalNotifications(config: Config): boolean {
  return config.getOptionalBoolean('mcpBroker.signalNotifications') ?? true;
}

/** The stores behind client sessions and elicitation ids; undefined members mean in memory. */
export interface SharedStateStores {
  sessionStore?: ClientSessionStore;
  elicitationStore?: ElicitationIdStore;
  /** Used `requestState` nonces (single use across replicas). */
  requestStateNonces?: RequestStateNonceStore;
  /** Tool calls held for a 2026-07-28 client's input, resumable from any replica. */
  heldCalls?: HeldCallStore;
  /** The signals between replicas: cancellations, answers, relayed rounds, session ends. */
  signals?: SignalStore;
  /** Rate-limit quota shared by every replica (mcpBroker.rateLimits). */
  quota?: QuotaStore;
  /** This replica's presence among the replicas (not started yet). */
  presence?: ReplicaPresence;
  /** The task table: a person's tasks, reachable through every replica. */
  tasks?: TaskStore;
  /** The open inputs of tasks carried across eras (in the elicitations table). */
  taskInputs?: TaskInputStore;
}

/**
 * Builds the stores for `kind`. For `database` it first migrates the plugin's database (unless
 * the database service says migrations are skipped); several replicas starting together are
 * serialised by knex's migration lock. `signalNotifications: false` makes the replicas' bus poll
 * only (see config.d.ts); `notifications` is the replica's listening connection the bus shares.
 */
export async function createSharedStateStores(
  kind: SessionStoreKind,
  database: DatabaseService,
  options: { signalNotifications?: boolean; notifications?: PostgresNotifications } = {},
): Promise<SharedStateStores> {
  if (kind === 'memory') return {};
  const knex = await database.getClient();
  if (!database.migrations?.skip) await migrateBrokerDatabase(knex);
  // The one writer of the signals table, also for the held-call store's hand-overs.
  const signals = new DatabaseSignalStore(knex, {
    notify: options.signalNotifications,
    notifications: options.notifications,
  });
  // This replica's presence: what it holds is taken over once it is gone (start it, then serve).
  const presence = new ReplicaPresence({ store: new DatabaseReplicaPresenceStore(knex) });
  return {
    presence,
    sessionStore: new DatabaseClientSessionStore(knex, { replicaId: presence.id }),
    elicitationStore: new DatabaseElicitationIdStore(knex),
    requestStateNonces: new DatabaseRequestStateNonceStore(knex),
    heldCalls: new DatabaseHeldCallStore(knex, { signals, replicaId: presence.id }),
    signals,
    quota: new DatabaseQuotaStore(knex),
    tasks: new DatabaseTaskStore(knex),
    taskInputs: new DatabaseTaskInputStore(knex),
  };
}
