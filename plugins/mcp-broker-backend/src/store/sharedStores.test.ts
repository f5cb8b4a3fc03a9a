/*
 * The broker's stores against one contract, on memory, SQLite and PostgreSQL: the in-memory
 * stores are the single-replica default, the database stores are what several replicas share.
 * The concurrency tests use separate connection pools, as separate replicas would.
 */
import {
  ElicitationMapping,
  ElicitationIdStore,
  MemoryElicitationIdStore,
} from '../calls/ElicitationIdMap';
import {
  ClientSessionStore,
  MemoryClientSessionStore,
  StoredClientSession,
} from '../sessions/ClientSessionStore';
import { ClientSessionRegistry } from '../sessions/ClientSessionRegistry';
import { DatabaseClientSessionStore } from './DatabaseClientSessionStore';
import { DatabaseElicitationIdStore } from './DatabaseElicitationIdStore';
import { DatabaseReplicaPresenceStore } from './DatabaseReplicaPresenceStore';
import { BROKER_MIGRATIONS, migrateBrokerDatabase, rollbackBrokerDatabase } from './migrations';
import { replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines: databaseEngines, databases } = replicaDatabases('broker shared store tests');

interface Engine {
  label: string;
  /** Two store sets that see the same data (two "replicas"). */
  open(): Promise<{
    replicas: Array<{ sessions: ClientSessionStore; elicitations: ElicitationIdStore }>;
    /** The replicas' presence marks (shared engines only). */
    presence?: DatabaseReplicaPresenceStore;
    close(): Promise<void>;
  }>;
}

const engines: Engine[] = [
  {
    label: 'memory',
    async open() {
      const stores = {
        sessions: new MemoryClientSessionStore(),
        elicitations: new MemoryElicitationIdStore(),
      };
      return { replicas: [stores, stores], close: async () => {} };
    },
  },
];
for (const database of databaseEngines) {
  engines.push({
    label: database.label,
    async open() {
      const { knexes, close } = await database.open();
      return {
        presence: new DatabaseReplicaPresenceStore(knexes[0]),
        replicas: knexes.map((knex, i) => ({
          sessions: new DatabaseClientSessionStore(knex, { replicaId: `replica-${i}` }),
          elicitations: new DatabaseElicitationIdStore(knex),
        })),
        close,
      };
    },
  });
}

const NOW = 1_800_000_000_000;

function session(overrides: Partial<StoredClientSession> = {}): StoredClientSession {
  return {
    id: `s-${Math.random().toString(36).slice(2)}`,
    principal: 'user:default/alice',
    protocolVersion: '2025-11-25',
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: 'test', version: '1' },
    expiresAt: NOW + 60_000,
    ...overrides,
  };
}

function mapping(overrides: Partial<ElicitationMapping> = {}): ElicitationMapping {
  return {
    gatewayId: `example:${Math.random().toString(36).slice(2)}AAAAAAAAAAAAAAAAAAAA`,
    backendRequestId: '7.5',
    backend: 'example',
    backendSessionId: 'backend-session-1',
    protocolVersion: '2025-11-25',
    clientSessionId: 'client-1',
    callId: 'call-1',
    expiresAt: NOW + 60_000,
    ...overrides,
  };
}

describe.each(engines)('broker shared stores on $label', engine => {
  let replicas: Awaited<ReturnType<Engine['open']>>['replicas'];
  let presence: DatabaseReplicaPresenceStore | undefined;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ replicas, presence, close } = await engine.open());
  }, 60_000);
  afterAll(async () => close());
  const [a, b] = [0, 1].map(i => () => replicas[i]);

  it('recognises a session created on one replica on the other, with everything a replica needs', async () => {
    const s = session();
    await a().sessions.insert(s);
    expect(await b().sessions.get(s.id, NOW)).toEqual(s);
  });

  it('keeps the curated endpoint a session was made on, for every replica', async () => {
    const s = { ...session(), endpoint: 'triage' };
    await a().sessions.insert(s);
    expect(await b().sessions.get(s.id, NOW)).toEqual(s);
  });

  it('never returns an expired session, and extends only unexpired ones forwards', async () => {
    const s = session({ expiresAt: NOW + 1_000 });
    await a().sessions.insert(s);
    expect(await b().sessions.get(s.id, NOW + 1_000)).toBeUndefined();
    await b().sessions.extend([s.id], NOW + 5_000, NOW + 1_000); // too late: stays expired
    expect(await a().sessions.get(s.id, NOW + 1_001)).toBeUndefined();

    const live = session({ expiresAt: NOW + 1_000 });
    const other = session({ expiresAt: NOW + 1_000 });
    await a().sessions.insert(live);
    await a().sessions.insert(other);
    await b().sessions.extend([live.id, 'unknown'], NOW + 9_000, NOW);
    await b().sessions.extend([live.id], NOW + 2_000, NOW); // never backwards
    expect((await a().sessions.get(live.id, NOW + 8_000))?.expiresAt).toBe(NOW + 9_000);
    expect(await a().sessions.liveIds([live.id, other.id, s.id, 'unknown'], NOW + 5_000)).toEqual(
      new Set([live.id]),
    );
  });

  it('counts a principal’s unexpired sessions across replicas (the per-principal limit)', async () => {
    const principal = `user:default/count-${Math.random().toString(36).slice(2)}`;
    await a().sessions.insert(session({ principal }));
    await b().sessions.insert(session({ principal }));
    await b().sessions.insert(session({ principal, expiresAt: NOW - 1 }));
    await a().sessions.insert(session({ principal: `${principal}-other` }));
    expect(await a().sessions.countLive(principal, NOW)).toBe(2);
    expect(await b().sessions.countLive(principal, NOW + 60_000)).toBe(0);
  });

  it('never lets replicas racing initialize overshoot the per-principal limit', async () => {
    const principal = `user:default/race-${Math.random().toString(36).slice(2)}`;
    const registries = [a(), b()].map(
      stores =>
        new ClientSessionRegistry({
          store: stores.sessions,
          ttlMs: 60_000,
          limits: { perPrincipal: 3, perReplica: 100 },
          sharedStore: true,
        }),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        registries[i % 2]
          .create({ principal, protocolVersion: '2025-11-25', clientCapabilities: {} })
          .then(
            () => 'created',
            (error: Error) => error.name,
          ),
      ),
    );
    expect(outcomes.filter(o => o === 'created')).toHaveLength(3);
    expect(outcomes.filter(o => o !== 'created')).toEqual(Array(9).fill('SessionLimitError'));
    expect(await a().sessions.countLive(principal, Date.now())).toBe(3);
    registries.forEach(registry => registry.closeLocal());
  });

  it('lets one replica hold a session’s stream lease until it releases it or the lease lapses', async () => {
    const s = session({ expiresAt: NOW + 100_000 });
    await a().sessions.insert(s);
    // Both replicas present throughout (a gone one is the next test's).
    await presence?.beat('replica-0', NOW + 1_000_000, NOW);
    await presence?.beat('replica-1', NOW + 1_000_000, NOW);
    const both = await Promise.all([
      a().sessions.acquireStreamLease(s.id, 'stream-a', NOW + 30_000, NOW),
      b().sessions.acquireStreamLease(s.id, 'stream-b', NOW + 30_000, NOW),
    ]);
    expect(both.filter(Boolean)).toHaveLength(1);
    const [holder, other] = both[0] ? ['stream-a', b()] : ['stream-b', a()];
    expect(
      await other.sessions.acquireStreamLease(s.id, 'stream-c', NOW + 40_000, NOW + 10_000),
    ).toBe(false);
    // Renewed while open: still held after the first expiry.
    expect(await a().sessions.renewStreamLeases([holder, 'unknown'], NOW + 60_000)).toEqual([
      'unknown',
    ]);
    expect(
      await other.sessions.acquireStreamLease(s.id, 'stream-c', NOW + 70_000, NOW + 40_000),
    ).toBe(false);
    // A foreign release changes nothing; the holder's release frees it at once.
    await other.sessions.releaseStreamLease(s.id, 'stream-c');
    expect(
      await other.sessions.acquireStreamLease(s.id, 'stream-c', NOW + 70_000, NOW + 40_000),
    ).toBe(false);
    await b().sessions.releaseStreamLease(s.id, holder);
    expect(
      await other.sessions.acquireStreamLease(s.id, 'stream-c', NOW + 70_000, NOW + 40_000),
    ).toBe(true);
    // Not renewed (its replica crashed): another stream may take it once it lapsed.
    expect(
      await a().sessions.acquireStreamLease(s.id, 'stream-d', NOW + 80_000, NOW + 69_999),
    ).toBe(false);
    expect(
      await a().sessions.acquireStreamLease(s.id, 'stream-d', NOW + 80_000, NOW + 70_000),
    ).toBe(true);
    // Never for an unknown or expired session.
    expect(await a().sessions.acquireStreamLease('unknown', 'stream-e', NOW + 30_000, NOW)).toBe(
      false,
    );
    expect(
      await b().sessions.acquireStreamLease(s.id, 'stream-e', NOW + 130_000, NOW + 100_000),
    ).toBe(false);
  });

  it('deletes sessions and sweeps expired ones', async () => {
    const s = session();
    await a().sessions.insert(s);
    expect(await b().sessions.delete(s.id)).toBe(true);
    expect(await a().sessions.delete(s.id)).toBe(false);
    const old = session({ expiresAt: NOW - 1 });
    await a().sessions.insert(old);
    expect(await b().sessions.deleteExpired(NOW)).toBeGreaterThanOrEqual(1);
    expect(await a().sessions.get(old.id, 0)).toBeUndefined();
  });

  it('keeps the backend id token, its backend session and expiry through a claim on another replica', async () => {
    const m = mapping();
    await a().elicitations.insert(m);
    expect(await b().elicitations.peek(m.gatewayId)).toEqual(m);
    expect(await b().elicitations.claim(m.gatewayId, 'client-1', NOW)).toEqual(m);
    expect(await a().elicitations.claim(m.gatewayId, 'client-1', NOW)).toBeUndefined();
  });

  it('keeps the task, backend input key and person of a task input through a claim on another replica', async () => {
    const m = mapping({
      task: { taskId: `jobs:${'t'.repeat(43)}`, backendInputKey: 'confirm-7', principal: 'user:x' },
    });
    await a().elicitations.insert(m);
    expect(await b().elicitations.claim(m.gatewayId, 'client-1', NOW)).toEqual(m);
  });

  it('lets exactly one of many concurrent claims on two replicas win', async () => {
    const m = mapping();
    await a().elicitations.insert(m);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        replicas[i % 2].elicitations.claim(m.gatewayId, 'client-1', NOW),
      ),
    );
    expect(results.filter(r => r !== undefined)).toEqual([m]);
  });

  it('refuses a claim from another client session or after expiry, and leaves the entry intact', async () => {
    const m = mapping({ expiresAt: NOW + 10 });
    await a().elicitations.insert(m);
    expect(await b().elicitations.claim(m.gatewayId, 'client-2', NOW)).toBeUndefined();
    expect(await b().elicitations.claim(m.gatewayId, 'client-1', NOW + 10)).toBeUndefined();
    expect(await a().elicitations.peek(m.gatewayId)).toEqual(m);
    // The expiry takes it whatever its session.
    expect(await b().elicitations.take(m.gatewayId)).toEqual(m);
    expect(await a().elicitations.take(m.gatewayId)).toBeUndefined();
  });

  it('releases ids by call, by client session and by expiry', async () => {
    const byCall = mapping({ callId: 'call-x' });
    const bySession = mapping({ clientSessionId: 'client-x', callId: 'call-y' });
    const expired = mapping({ expiresAt: NOW - 1, callId: 'call-z' });
    const kept = mapping({ callId: 'call-k' });
    for (const m of [byCall, bySession, expired, kept]) await a().elicitations.insert(m);
    await b().elicitations.deleteByCall('call-x');
    await b().elicitations.deleteByClientSession('client-x');
    await b().elicitations.deleteExpired(NOW);
    for (const m of [byCall, bySession, expired])
      expect(await a().elicitations.peek(m.gatewayId)).toBeUndefined();
    expect(await a().elicitations.peek(kept.gatewayId)).toEqual(kept);
  });
});

// Replicas that are separate processes sharing a database: one of them can be gone.
describe.each(databaseEngines)('stream leases of a gone replica on $label', database => {
  let sessions: DatabaseClientSessionStore[];
  let presence: DatabaseReplicaPresenceStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const opened = await database.open();
    close = opened.close;
    sessions = opened.knexes.map(
      (knex, i) => new DatabaseClientSessionStore(knex, { replicaId: `replica-${i}` }),
    );
    presence = new DatabaseReplicaPresenceStore(opened.knexes[0]);
  }, 60_000);
  afterAll(async () => close());

  it('lets another replica take a stream lease as soon as its holder’s presence lapsed, and tells the holder it lost it', async () => {
    const [a, b] = sessions;
    const s = session({ expiresAt: NOW + 100_000 });
    await a.insert(s);
    await presence.beat('replica-0', NOW + 10_000, NOW);
    await presence.beat('replica-1', NOW + 60_000, NOW);
    expect(await a.acquireStreamLease(s.id, 'stream-a', NOW + 30_000, NOW)).toBe(true);
    // Its holder present: not taken, however often asked.
    expect(await b.acquireStreamLease(s.id, 'stream-b', NOW + 40_000, NOW + 9_999)).toBe(false);
    // Its holder's mark lapsed (killed): taken long before the lease itself would lapse.
    expect(await b.acquireStreamLease(s.id, 'stream-b', NOW + 40_000, NOW + 10_000)).toBe(true);
    // The first replica, alive after all (its event loop stalled), learns at its next renewal.
    expect(await a.renewStreamLeases(['stream-a'], NOW + 50_000)).toEqual(['stream-a']);
    expect(await b.renewStreamLeases(['stream-b'], NOW + 50_000)).toEqual([]);
  });
});

describe('broker migrations', () => {
  it.each(databases.eachSupportedId())(
    'go up and down on %p',
    async id => {
      const knex = await databases.init(id);
      await migrateBrokerDatabase(knex);
      expect(await knex.schema.hasTable('mcp_broker_elicitations')).toBe(true);
      expect(await knex.schema.hasTable('mcp_broker_client_sessions')).toBe(true);
      expect(await knex.schema.hasTable('mcp_broker_signals')).toBe(true);
      expect(await knex.schema.hasTable('mcp_broker_rate_windows')).toBe(true);
      expect(await knex.schema.hasTable('mcp_broker_replicas')).toBe(true);
      await rollbackBrokerDatabase(knex);
      expect(await knex.schema.hasTable('mcp_broker_elicitations')).toBe(false);
      expect(await knex.schema.hasTable('mcp_broker_client_sessions')).toBe(false);
      expect(await knex.schema.hasTable('mcp_broker_signals')).toBe(false);
      expect(await knex.schema.hasTable('mcp_broker_cancellations')).toBe(false);
      expect(await knex.schema.hasTable('mcp_broker_rate_windows')).toBe(false);
      expect(await knex.schema.hasTable('mcp_broker_replicas')).toBe(false);
      await migrateBrokerDatabase(knex);
      expect(await knex.schema.hasTable('mcp_broker_elicitations')).toBe(true);
    },
    60_000,
  );

  it.each(databases.eachSupportedId())(
    'widen the gateway ids with the task input columns and let a task input go without a client session, and back, on %p',
    async id => {
      const knex = await databases.init(id);
      const columns = async () =>
        Promise.all(
          ['principal', 'task_id', 'backend_input_key', 'request_json'].map(column =>
            knex.schema.hasColumn('mcp_broker_elicitations', column),
          ),
        );
      /** A task input's row: no client session. */
      const taskInput = (gatewayId: string) =>
        knex('mcp_broker_elicitations').insert({
          gateway_id: gatewayId,
          backend_request_id: '1',
          backend: 'jobs',
          protocol_version: '2025-11-25',
          client_session_id: null,
          call_id: 'task-input',
          task_id: 'jobs:t',
          principal: 'user:default/alice',
          expires_at: 1,
        });
      const sessionNullable = async () =>
        (await knex('mcp_broker_elicitations').columnInfo('client_session_id')).nullable;
      await migrateBrokerDatabase(knex);
      expect(await columns()).toEqual([true, true, true, true]);
      expect(await sessionNullable()).toBe(true);
      await taskInput('g1');
      // Each migration on its own (knex's `name`), the later one first.
      const sessions = { ...BROKER_MIGRATIONS, name: '20261213000000_task_input_sessions.js' };
      const taskInputs = { ...BROKER_MIGRATIONS, name: '20261212000000_task_inputs.js' };
      await knex.migrate.down(sessions);
      // The task input could not stay; a client session is required again.
      expect(await knex('mcp_broker_elicitations').where('gateway_id', 'g1')).toEqual([]);
      expect(await sessionNullable()).toBe(false);
      await knex.migrate.down(taskInputs);
      expect(await columns()).toEqual([false, false, false, false]);
      await knex.migrate.up(taskInputs);
      await knex.migrate.up(sessions);
      expect(await columns()).toEqual([true, true, true, true]);
      expect(await sessionNullable()).toBe(true);
      await taskInput('g3');
      expect(await knex('mcp_broker_elicitations').where('gateway_id', 'g3')).toHaveLength(1);
    },
    60_000,
  );

  it.each(databases.eachSupportedId())(
    'replace the relayed cancellations and the held calls’ mailbox with one signal table, and back, on %p',
    async id => {
      const knex = await databases.init(id);
      const tables = async () => ({
        signals: await knex.schema.hasTable('mcp_broker_signals'),
        cancellations: await knex.schema.hasTable('mcp_broker_cancellations'),
        mailbox: await knex.schema.hasTable('mcp_broker_held_call_messages'),
      });
      await migrateBrokerDatabase(knex);
      expect(await tables()).toEqual({ signals: true, cancellations: false, mailbox: false });
      // That one migration, whatever came after it (knex's `name`).
      const replicaSignals = { ...BROKER_MIGRATIONS, name: '20261128000000_replica_signals.js' };
      await knex.migrate.down(replicaSignals);
      expect(await tables()).toEqual({ signals: false, cancellations: true, mailbox: true });
      // The tables it brings back take rows as before.
      await knex('mcp_broker_cancellations').insert({
        client_session_id: 's',
        request_key: '1',
        expires_at: 1,
      });
      await knex.migrate.up(replicaSignals);
      expect(await tables()).toEqual({ signals: true, cancellations: false, mailbox: false });
    },
    60_000,
  );
});
