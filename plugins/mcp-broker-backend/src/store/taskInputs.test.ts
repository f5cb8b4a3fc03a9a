/*
 * The open inputs of tasks (docs/contracts/tasks-and-apps.md §2.4, §2.12.4), one suite over every
 * TaskInputStore: in memory, and on SQLite and PostgreSQL as two replicas, in the widened
 * `mcp_broker_elicitations` beside a client session's gateway ids, which neither kind of claim
 * may take from the other.
 */
import { DatabaseElicitationIdStore } from './DatabaseElicitationIdStore';
import { DatabaseTaskInputStore } from './DatabaseTaskInputStore';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';
import { MemoryTaskInputStore, type TaskInput, type TaskInputStore } from '../tasks/TaskInputStore';

const { engines } = replicaDatabases('task input store tests');
const NOW = 1_800_000_000_000;

type Replicas = () => { stores: [TaskInputStore, TaskInputStore] };

const suites: Array<{ label: string; replicas: () => Replicas }> = [
  {
    label: 'memory',
    replicas: () => {
      let store: MemoryTaskInputStore;
      beforeEach(() => {
        store = new MemoryTaskInputStore();
      });
      return () => ({ stores: [store, store] });
    },
  },
  ...engines.map(engine => ({
    label: engine.label,
    replicas: (): Replicas => {
      const knexes = replicaDatabaseForSuite(engine);
      return () => ({
        stores: [new DatabaseTaskInputStore(knexes[0]), new DatabaseTaskInputStore(knexes[1])],
      });
    },
  })),
];

let counter = 0;
/** An input of task `taskId` of `principal` with a fresh gateway id. */
function input(taskId: string, principal = 'user:default/alice', expiresAt = NOW + 60_000) {
  counter += 1;
  return {
    gatewayId: `jobs:input${counter}AAAAAAAAAAAAAAAAAAAA`,
    taskId,
    principal,
    server: 'jobs',
    backendSessionId: 'backend-session-1',
    protocolVersion: '2025-11-25',
    backendRequestId: counter % 2 === 0 ? `${counter}.0` : `"${counter}"`,
    request: { method: 'elicitation/create', params: { mode: 'form', message: `q${counter}` } },
    expiresAt,
  } satisfies TaskInput;
}

const taskOf = () => `jobs:task${(counter += 1)}`;

describe.each(suites)('task input store ($label)', ({ replicas: declare }) => {
  const replicas = declare();

  it('lists a task’s open inputs on every replica, with the backend id as written', async () => {
    const [a, b] = replicas().stores;
    const task = taskOf();
    const first = input(task);
    const second = input(task);
    await a.insert(first);
    await a.insert(second);
    await a.insert(input(taskOf()));
    const open = await b.openOf(task, NOW);
    expect(open.sort((x, y) => x.gatewayId.localeCompare(y.gatewayId))).toEqual(
      [first, second].sort((x, y) => x.gatewayId.localeCompare(y.gatewayId)),
    );
  });

  it('lets the owner claim an input of the task once, whichever replica claims', async () => {
    const [a, b] = replicas().stores;
    const task = taskOf();
    const asked = input(task);
    await a.insert(asked);
    const claims = await Promise.all([
      a.claim(asked.gatewayId, task, asked.principal, NOW),
      b.claim(asked.gatewayId, task, asked.principal, NOW),
      b.claim(asked.gatewayId, task, asked.principal, NOW),
    ]);
    expect(claims.filter(claim => claim !== undefined)).toEqual([asked]);
    expect(await b.openOf(task, NOW)).toEqual([]);
  });

  it('gives nothing to another person, another task, or after the expiry, and keeps the input', async () => {
    const [a, b] = replicas().stores;
    const task = taskOf();
    const asked = input(task);
    await a.insert(asked);
    expect(await b.claim(asked.gatewayId, task, 'user:default/mallory', NOW)).toBeUndefined();
    expect(await b.claim(asked.gatewayId, taskOf(), asked.principal, NOW)).toBeUndefined();
    expect(await b.claim(asked.gatewayId, task, asked.principal, asked.expiresAt)).toBeUndefined();
    expect(await b.openOf(task, NOW)).toEqual([asked]);
    expect(await b.openOf(task, asked.expiresAt)).toEqual([]);
  });

  it('sweeps expired inputs only', async () => {
    const [a, b] = replicas().stores;
    const task = taskOf();
    const soon = input(task, undefined, NOW + 1_000);
    const later = input(task, undefined, NOW + 60_000);
    await a.insert(soon);
    await a.insert(later);
    await b.deleteExpired(NOW + 1_000);
    expect(await a.openOf(task, NOW)).toEqual([later]);
  });
});

describe.each(engines)('task inputs beside client sessions’ gateway ids ($label)', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('are never claimed by a client session’s answer', async () => {
    const tasks = new DatabaseTaskInputStore(knexes[0]);
    const sessions = new DatabaseElicitationIdStore(knexes[1]);
    const task = taskOf();
    const asked = input(task);
    await tasks.insert(asked);
    expect(await sessions.claim(asked.gatewayId, '', NOW)).toBeUndefined();
    expect(await sessions.claim(asked.gatewayId, 'session-1', NOW)).toBeUndefined();
    expect(await tasks.openOf(task, NOW)).toEqual([asked]);
  });
});
