/*
 * The task relay's sweep of expired rows and the DELETE of pinned backend sessions
 * (docs/contracts/tasks-and-apps.md §2.5, §2.11), on two relays sharing one task table as two
 * replicas would (in memory, SQLite, PostgreSQL), against the real 2025-11-25 tasks fixture,
 * which records the sessions it is asked to DELETE. The relays' clocks are the test's, so rows
 * expire when the test says.
 */
import { startTasksServer, type LegacyTasksServer } from '@internal/test-mcp-backends';
import type { BrokerServerConfig, TasksConfig } from '../config';
import { HttpBackendTransport } from '../backend/HttpBackendTransport';
import { LegacyChannel } from '../backend/LegacyChannel';
import { DatabaseTaskStore } from '../store/DatabaseTaskStore';
import { replicaDatabaseForSuite, replicaDatabases } from '../store/__testUtils__/replicaDatabases';
import type { TaskCaller } from './findOwnTask';
import { LegacyTaskRelay } from './LegacyTaskRelay';
import { MemoryTaskStore } from './MemoryTaskStore';
import type { TaskStore } from './TaskStore';

const { engines } = replicaDatabases('task relay sweep tests');
const CONFIG: TasksConfig = {
  enabled: true,
  perPerson: 8,
  maxTtlMs: 3_600_000,
  minPollIntervalMs: 1_000,
  maxStoredResultBytes: 1024,
};
const caller: TaskCaller = { principal: 'user:default/alice', mayUse: () => true };

type Stores = () => [TaskStore, TaskStore];

const suites: Array<{ label: string; stores: () => Stores }> = [
  {
    label: 'memory',
    stores: () => {
      const store = new MemoryTaskStore();
      return () => [store, store];
    },
  },
  ...engines.map(engine => ({
    label: engine.label,
    stores: (): Stores => {
      const knexes = replicaDatabaseForSuite(engine);
      return () => [new DatabaseTaskStore(knexes[0]), new DatabaseTaskStore(knexes[1])];
    },
  })),
];

describe.each(suites)('the task relay’s sweep ($label)', ({ stores: declare }) => {
  const stores = declare();
  let fixture: LegacyTasksServer;
  let clock = Date.now();

  beforeAll(async () => {
    fixture = await startTasksServer();
  });
  afterAll(async () => fixture?.close());

  /** A replica's relay on `store`, with its own channel to the fixture (its own sessions). */
  function replica(store: TaskStore): LegacyTaskRelay {
    const server: BrokerServerConfig = {
      name: 'jobs',
      url: fixture.url,
      toolPrefix: 'jobs_',
      headers: {},
    };
    const channel = new LegacyChannel(
      { name: 'jobs', url: fixture.url, headers: {} },
      HttpBackendTransport.shared,
      5_000,
    );
    return new LegacyTaskRelay({
      store,
      config: CONFIG,
      toolCallTimeoutMs: 5_000,
      backendOf: name =>
        name === 'jobs' ? { server, channel, supportsTaskCalls: true } : undefined,
      now: () => clock,
    });
  }

  /** Starts a `deploy` of `target` with `ttl` through `relay`; the broker task id. */
  async function deploy(relay: LegacyTaskRelay, target: string, ttl: number): Promise<string> {
    const taskId = relay.newTaskId('jobs');
    const reply = await relay.create(caller, {
      server: 'jobs',
      tool: 'deploy',
      params: { name: 'deploy', arguments: { target }, task: { ttl } },
      taskId,
      signal: new AbortController().signal,
    });
    expect(reply).toMatchObject({ result: { task: { taskId, status: 'working' } } });
    return taskId;
  }

  it('DELETEs a pinned backend session once the sweep deleted its last row, never before', async () => {
    const [storeA, storeB] = stores();
    const a = replica(storeA);
    const b = replica(storeB);
    clock = Date.now();
    await deploy(a, 'first', 1_000);
    const second = await deploy(a, 'second', 5_000);
    const session = (await fixture.started('first')).session;
    expect((await fixture.started('second')).session).toBe(session);

    // The first row expires and goes; the second still pins the session.
    await b.deleteExpired(clock + 1_000);
    expect(fixture.deletedSessions).not.toContain(session);
    const got = await b.get(caller, second, new AbortController().signal);
    expect(got).toMatchObject({ result: { taskId: second, status: 'working' } });

    // B's sweep deletes the last row: B ends the session; A's later sweep has nothing to end.
    await b.deleteExpired(clock + 5_000);
    expect(fixture.deletedSessions.filter(id => id === session)).toHaveLength(1);
    await a.deleteExpired(clock + 5_000);
    expect(fixture.deletedSessions.filter(id => id === session)).toHaveLength(1);

    // A, which opened the session, replaces it on its next task call (one retry, nothing ran).
    await deploy(a, 'third', 5_000);
    expect((await fixture.started('third')).session).not.toBe(session);
  });
});
