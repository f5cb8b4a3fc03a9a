/*
 * The task table's contract (docs/contracts/tasks-and-apps.md §2.4–§2.6, §2.9), one suite over
 * every TaskStore: in memory, and on SQLite and PostgreSQL as two replicas (two connection pools
 * on PostgreSQL, as two processes would have).
 */
import type { TaskStore, TaskSlot, TaskState } from '../tasks/TaskStore';
import { MemoryTaskStore } from '../tasks/MemoryTaskStore';
import { DatabaseTaskStore, TASKS_TABLE } from './DatabaseTaskStore';
import { migrateBrokerDatabase, rollbackBrokerDatabase } from './migrations';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines, databases } = replicaDatabases('task store tests');
const NOW = 1_800_000_000_000;
const HOUR = 3_600_000;
const BOUNDS = { perPerson: 3, retained: 12 };

type Replicas = () => [TaskStore, TaskStore];

const suites: Array<{ label: string; replicas: () => Replicas }> = [
  {
    label: 'memory',
    replicas: () => {
      let store: MemoryTaskStore;
      beforeEach(() => {
        store = new MemoryTaskStore();
      });
      return () => [store, store];
    },
  },
  ...engines.map(engine => ({
    label: engine.label,
    replicas: (): Replicas => {
      const knexes = replicaDatabaseForSuite(engine);
      return () => [new DatabaseTaskStore(knexes[0]), new DatabaseTaskStore(knexes[1])];
    },
  })),
];

let counter = 0;
/** A slot of a fresh task of `principal` (unique ids across the suite's shared database). */
function slot(principal: string, taskId = `deploys:t${(counter += 1)}`): TaskSlot {
  return {
    taskId,
    principal,
    server: 'deploys',
    serverIdentity: 'identity-1',
    tool: 'deploy',
    toolAnnotations: '{"readOnlyHint":false}',
    credentialMode: 'broker',
    backendEra: 'legacy',
  };
}

const working = (ttlMs = HOUR, extra: Partial<TaskState> = {}): TaskState => ({
  status: 'working',
  createdAt: '2027-01-15T08:00:00Z',
  lastUpdatedAt: '2027-01-15T08:00:00Z',
  ttlMs,
  pollIntervalMs: 500,
  ...extra,
});

/** A person name no other test of the suite uses (the database is shared by the suite). */
const person = (name: string) => `user:default/${name}-${(counter += 1)}`;

describe.each(suites)('task store ($label)', ({ replicas: declare }) => {
  const replicas = declare();

  /** Reserves and activates a task of `principal` recorded at `at`; its id. */
  async function started(
    store: TaskStore,
    principal: string,
    at = NOW,
    state: TaskState = working(),
  ): Promise<string> {
    const task = slot(principal);
    expect(await store.reserve(task, BOUNDS, at, at + 60_000)).toBe(true);
    expect(
      await store.activate(task.taskId, { backendTaskId: `backend-${task.taskId}` }, state),
    ).toBeDefined();
    return task.taskId;
  }

  it('reserves a pending slot and turns it into the task, expiring with its ttl', async () => {
    const [a, b] = replicas();
    const alice = person('alice');
    const task = slot(alice);
    expect(await a.reserve(task, BOUNDS, NOW, NOW + 60_000)).toBe(true);
    expect(await b.get(task.taskId)).toMatchObject({
      ...task,
      status: 'pending',
      recordedAt: NOW,
      expiresAt: NOW + 60_000,
      version: 0,
    });
    // A pending slot is not listed: no backend id exists yet.
    expect(await b.listOf(alice, NOW)).toEqual([]);
    const active = await b.activate(
      task.taskId,
      { backendTaskId: 'backend-1', backendSessionId: 'backend-session-1' },
      working(2 * HOUR, { statusMessage: 'x'.repeat(2000) }),
    );
    expect(active).toMatchObject({
      status: 'working',
      backendTaskId: 'backend-1',
      backendSessionId: 'backend-session-1',
      ttlMs: 2 * HOUR,
      pollIntervalMs: 500,
      createdAt: '2027-01-15T08:00:00Z',
      expiresAt: NOW + 2 * HOUR,
      version: 1,
    });
    expect(active?.statusMessage).toHaveLength(1024);
    expect(await a.get(task.taskId)).toEqual(active);
    // Only a pending slot can be activated, once.
    expect(await a.activate(task.taskId, { backendTaskId: 'other' }, working())).toBeUndefined();
    expect(await a.activate('deploys:none', { backendTaskId: 'x' }, working())).toBeUndefined();
  });

  it('keeps the result of a task the broker made itself, with no backend id', async () => {
    const [a, b] = replicas();
    const task = slot(person('hank'));
    expect(await a.reserve(task, BOUNDS, NOW, NOW + 60_000)).toBe(true);
    const held = JSON.stringify({ content: [{ type: 'text', text: 'napped' }] });
    const active = await a.activate(task.taskId, { heldResult: held }, working(HOUR));
    expect(active).toMatchObject({ heldResult: held, expiresAt: NOW + HOUR });
    const read = await b.get(task.taskId);
    expect(read?.heldResult).toBe(held);
    expect(read?.backendTaskId).toBeUndefined();
    expect(read?.backendSessionId).toBeUndefined();
  });

  it('releases only a pending slot', async () => {
    const [a, b] = replicas();
    const alice = person('alice');
    const pending = slot(alice);
    await a.reserve(pending, BOUNDS, NOW, NOW + 60_000);
    await b.release(pending.taskId);
    expect(await a.get(pending.taskId)).toBeUndefined();
    const taskId = await started(a, alice);
    await b.release(taskId);
    expect(await a.get(taskId)).toMatchObject({ status: 'working' });
  });

  it('refuses a slot beyond the per-person bound; ended, expired and other people’s tasks do not count', async () => {
    const [a, b] = replicas();
    const alice = person('alice');
    const bob = person('bob');
    const done = await started(a, alice);
    const record = (await a.get(done))!;
    expect(await a.observe(done, record.version, working(HOUR, { status: 'completed' }))).toBe(
      true,
    );
    // Expires at NOW + 1000: counted before, not after.
    await started(a, alice, NOW, working(1000));
    await started(b, alice);
    await started(b, bob);
    expect(await a.countOpen(alice, NOW)).toBe(2);
    expect(await b.reserve(slot(alice), BOUNDS, NOW, NOW + 60_000)).toBe(true);
    expect(await a.countOpen(alice, NOW)).toBe(3);
    expect(await a.reserve(slot(alice), BOUNDS, NOW, NOW + 60_000)).toBe(false);
    expect(await b.reserve(slot(alice), BOUNDS, NOW + 1000, NOW + 60_000)).toBe(true);
    // A slot whose replica never answered stops counting when it expires.
    expect(await a.reserve(slot(alice), BOUNDS, NOW + 60_000, NOW + 120_000)).toBe(true);
  });

  it('never exceeds the bound under concurrent reservations on two replicas', async () => {
    const [a, b] = replicas();
    const carol = person('carol');
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? a : b).reserve(slot(carol), BOUNDS, NOW, NOW + 60_000),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(BOUNDS.perPerson);
    expect(await a.countOpen(carol, NOW)).toBe(BOUNDS.perPerson);
  });

  it('lets exactly one of two replicas write the same observation (compare-and-set on version)', async () => {
    const [a, b] = replicas();
    const taskId = await started(a, person('dave'));
    const { version } = (await a.get(taskId))!;
    const seen = working(3 * HOUR, { status: 'input_required', lastUpdatedAt: 'later' });
    const writes = await Promise.all([
      a.observe(taskId, version, seen),
      b.observe(taskId, version, seen),
    ]);
    expect(writes.filter(Boolean)).toHaveLength(1);
    // A ttl change moves the expiry, counted from when the slot was reserved.
    expect(await b.get(taskId)).toMatchObject({
      status: 'input_required',
      lastUpdatedAt: 'later',
      ttlMs: 3 * HOUR,
      expiresAt: NOW + 3 * HOUR,
      version: version + 1,
    });
    expect(await a.observe(taskId, version, working())).toBe(false);
    expect(await a.observe('deploys:none', 0, working())).toBe(false);
  });

  it('gives the watcher’s lease to one replica at a time, until it lapses or is given up', async () => {
    const [a, b] = replicas();
    const taskId = await started(a, person('ivan'));
    const before = (await a.get(taskId))!;
    const takes = await Promise.all([
      a.takeLease(taskId, 'replica-a', NOW, NOW + 30_000),
      b.takeLease(taskId, 'replica-b', NOW, NOW + 30_000),
    ]);
    expect(takes.filter(Boolean)).toHaveLength(1);
    const [holder, other] = takes[0] ? ['replica-a', 'replica-b'] : ['replica-b', 'replica-a'];
    // The holder renews it; the other gets it neither now nor by releasing it.
    expect(await b.takeLease(taskId, holder, NOW + 10_000, NOW + 40_000)).toBe(true);
    await a.releaseLease(taskId, other);
    expect(await a.takeLease(taskId, other, NOW + 39_000, NOW + 69_000)).toBe(false);
    // Lapsed: the other takes it over; released: anybody may take it.
    expect(await a.takeLease(taskId, other, NOW + 40_001, NOW + 70_001)).toBe(true);
    await b.releaseLease(taskId, other);
    expect(await a.takeLease(taskId, holder, NOW + 40_002, NOW + 70_002)).toBe(true);
    expect(await a.takeLease('deploys:none', holder, NOW, NOW + 30_000)).toBe(false);
    // Neither a pending slot nor an ended task is watched.
    const pending = slot(person('ivan'));
    await a.reserve(pending, BOUNDS, NOW, NOW + 60_000);
    expect(await b.takeLease(pending.taskId, holder, NOW, NOW + 30_000)).toBe(false);
    const { version } = (await a.get(taskId))!;
    expect(await a.observe(taskId, version, working(HOUR, { status: 'completed' }))).toBe(true);
    expect(await b.takeLease(taskId, other, NOW + 80_000, NOW + 110_000)).toBe(false);
    // The lease is not the task's state: only the observation moved the row's version.
    expect(await a.unwatchedOf([person('nobody')], NOW)).toEqual([]);
    expect((await b.get(taskId))!.version).toBe(before.version + 1);
  });

  it('finds the open tasks of the people listening that nobody watches, in one query', async () => {
    const [a, b] = replicas();
    const judy = person('judy');
    const kim = person('kim');
    const held = await started(a, judy);
    const lapsed = await started(a, judy);
    const free = await started(b, kim);
    // Expired at NOW + 1000: not looked for.
    await started(b, kim, NOW, working(1000));
    const ended = await started(a, kim);
    const { version } = (await a.get(ended))!;
    await a.observe(ended, version, working(HOUR, { status: 'failed' }));
    await started(a, person('someone-else'));
    // A 2026-07-28 backend's task is taken up too (polled through the modern relay).
    const modern = { ...slot(kim), backendEra: 'modern' as const };
    expect(await b.reserve(modern, BOUNDS, NOW, NOW + 60_000)).toBe(true);
    await b.activate(modern.taskId, { backendTaskId: `backend-${modern.taskId}` }, working());
    await a.takeLease(held, 'replica-a', NOW, NOW + 30_000);
    await a.takeLease(lapsed, 'replica-a', NOW - 40_000, NOW - 10_000);
    const found = await b.unwatchedOf([judy, kim], NOW + 2000);
    expect(found.map(task => task.taskId).sort()).toEqual([free, lapsed, modern.taskId].sort());
    expect(found.find(task => task.taskId === free)).toMatchObject({
      principal: kim,
      status: 'working',
      pollIntervalMs: 500,
    });
    expect(await b.unwatchedOf([], NOW)).toEqual([]);
  });

  it('lists a person’s unexpired tasks newest first, page by page', async () => {
    const [a, b] = replicas();
    const erin = person('erin');
    const bounds = { perPerson: 20, retained: 80 };
    const ids: string[] = [];
    // Two tasks share each recorded time: the id breaks the tie.
    for (let i = 0; i < 6; i += 1) {
      const task = slot(erin, `deploys:${erin}-${String.fromCharCode(97 + i)}`);
      const at = NOW + Math.floor(i / 2);
      await (i % 2 ? a : b).reserve(task, bounds, at, at + 60_000);
      await a.activate(task.taskId, { backendTaskId: `b${i}` }, working());
      ids.push(task.taskId);
    }
    await started(a, person('frank'));
    await a.reserve(slot(erin), bounds, NOW + 10, NOW + 60_000); // pending: not listed
    const expiring = slot(erin);
    await a.reserve(expiring, bounds, NOW + 10, NOW + 60_000);
    await a.activate(expiring.taskId, { backendTaskId: 'gone' }, working(5));

    const newestFirst = [...ids].reverse();
    expect((await b.listOf(erin, NOW + 100)).map(t => t.taskId)).toEqual(newestFirst);
    const first = await b.listOf(erin, NOW + 100, { limit: 3 });
    expect(first.map(t => t.taskId)).toEqual(newestFirst.slice(0, 3));
    const last = first[first.length - 1];
    const next = await a.listOf(erin, NOW + 100, { after: last, limit: 3 });
    expect(next.map(t => t.taskId)).toEqual(newestFirst.slice(3, 6));
    expect(await a.listOf(erin, NOW + 100, { after: next[2] })).toEqual([]);
  });

  it('keeps at most `retained` rows per person, forgetting the oldest ended ones first', async () => {
    const [a, b] = replicas();
    const gina = person('gina');
    const bounds = { perPerson: 2, retained: 3 };
    const ended: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const task = slot(gina);
      await a.reserve(task, bounds, NOW + i, NOW + 60_000);
      await a.activate(
        task.taskId,
        { backendTaskId: `b${i}` },
        working(HOUR, { status: 'completed' }),
      );
      ended.push(task.taskId);
    }
    const open = slot(gina);
    expect(await b.reserve(open, bounds, NOW + 5, NOW + 60_000)).toBe(true);
    expect(await a.get(ended[0])).toBeUndefined();
    expect(await a.get(ended[1])).toBeDefined();
    const second = slot(gina);
    expect(await b.reserve(second, bounds, NOW + 6, NOW + 60_000)).toBe(true);
    expect(await a.get(ended[1])).toBeUndefined();
    // Open tasks are never dropped: the bound refuses instead.
    expect(await b.reserve(slot(gina), bounds, NOW + 7, NOW + 60_000)).toBe(false);
    expect(await a.get(open.taskId)).toBeDefined();
    expect(await a.get(second.taskId)).toBeDefined();
  });

  it('moves every row of a forgotten backend session of one person at one server to its replacement, and no other', async () => {
    const [a, b] = replicas();
    const ivy = person('ivy');
    const pinned = async (session: string, owner = slot(ivy)) => {
      await a.reserve(owner, BOUNDS, NOW, NOW + 60_000);
      await a.activate(owner.taskId, { backendTaskId: 'x', backendSessionId: session }, working());
      return owner.taskId;
    };
    const first = await pinned('forgotten-1');
    const second = await pinned('forgotten-1');
    // Another session (someone else's: ivy may hold three open tasks), and the same session id
    // at another server and of another person — backends choose ids.
    const other = await pinned('alive-1', slot(person('kit')));
    const elsewhere = await pinned('forgotten-1', { ...slot(ivy), server: 'builds' });
    const someoneElse = await pinned('forgotten-1', slot(person('jo')));
    await b.replaceBackendSession(slot(ivy), 'forgotten-1', 'replacement-1');
    expect((await a.get(first))?.backendSessionId).toBe('replacement-1');
    expect((await a.get(second))?.backendSessionId).toBe('replacement-1');
    expect((await a.get(other))?.backendSessionId).toBe('alive-1');
    expect((await a.get(elsewhere))?.backendSessionId).toBe('forgotten-1');
    expect((await a.get(someoneElse))?.backendSessionId).toBe('forgotten-1');
    // The other server's and the other person's rows still name it.
    expect(await a.pinsBackendSession('forgotten-1', NOW)).toBe(true);
    expect(await a.pinsBackendSession('replacement-1', NOW)).toBe(true);
  });

  it('sweeps expired tasks and slots that never became tasks, and tells which backend sessions are pinned', async () => {
    const [a, b] = replicas();
    const hank = person('hank');
    const short = slot(hank);
    await a.reserve(short, BOUNDS, NOW, NOW + 60_000);
    await a.activate(
      short.taskId,
      { backendTaskId: 's', backendSessionId: 'pinned-1' },
      working(1000),
    );
    const stale = slot(hank);
    await a.reserve(stale, BOUNDS, NOW, NOW + 500);
    const kept = await started(a, hank);
    expect(await b.pinsBackendSession('pinned-1', NOW)).toBe(true);
    // Expired but not swept: still readable (its owner is told it expired).
    expect(await b.get(short.taskId)).toMatchObject({ expiresAt: NOW + 1000 });
    expect(await b.pinsBackendSession('pinned-1', NOW + 1000)).toBe(false);
    await b.deleteExpired(NOW + 1000);
    expect(await a.get(short.taskId)).toBeUndefined();
    expect(await a.get(stale.taskId)).toBeUndefined();
    expect(await a.get(kept)).toBeDefined();
    await b.delete(kept);
    expect(await a.get(kept)).toBeUndefined();
  });

  it('deletes the rows of a server made under one identity, and only those', async () => {
    const [a, b] = replicas();
    const jane = person('jane');
    const gone = await started(a, jane);
    const other = slot(jane);
    await a.reserve({ ...other, serverIdentity: 'identity-2' }, BOUNDS, NOW, NOW + 60_000);
    const elsewhere = slot(jane);
    await a.reserve({ ...elsewhere, server: 'builds' }, BOUNDS, NOW, NOW + 60_000);
    await b.deleteOfServer('deploys', 'identity-1');
    expect(await a.get(gone)).toBeUndefined();
    expect(await a.get(other.taskId)).toBeDefined();
    expect(await a.get(elsewhere.taskId)).toBeDefined();
  });

  it('names a pinned backend session to the sweep that deletes its last row, and only then', async () => {
    const [a, b] = replicas();
    const ivan = person('ivan');
    const session = `pinned-${(counter += 1)}`;
    const pinnedTask = async (ttlMs: number) => {
      const task = slot(ivan);
      await a.reserve(task, BOUNDS, NOW, NOW + 60_000);
      await a.activate(
        task.taskId,
        { backendTaskId: task.taskId, backendSessionId: session },
        working(ttlMs),
      );
      return task.taskId;
    };
    const first = await pinnedTask(1000);
    const second = await pinnedTask(2000);
    const unpinned = {
      server: 'deploys',
      serverIdentity: 'identity-1',
      backendSessionId: session,
    };
    // The first row goes, the second still pins the session: nobody may end it.
    expect(await b.deleteExpired(NOW + 1000)).not.toContainEqual(unpinned);
    expect(await a.get(first)).toBeUndefined();
    expect(await b.pinsBackendSession(session, NOW + 1000)).toBe(true);
    // The sweep that deletes the last row names it, once; a later sweep has nothing to name.
    expect(await a.deleteExpired(NOW + 2000)).toContainEqual(unpinned);
    expect(await a.get(second)).toBeUndefined();
    expect(await b.deleteExpired(NOW + 2000)).not.toContainEqual(unpinned);
  });
});

describe('the mcp_broker_tasks migration', () => {
  it.each(databases.eachSupportedId())(
    'creates the table with its lease and held-result columns, and drops it, on %p',
    async id => {
      const knex = await databases.init(id);
      await migrateBrokerDatabase(knex);
      const columns = Object.keys(await knex(TASKS_TABLE).columnInfo());
      expect(columns).toEqual(
        expect.arrayContaining([
          'task_id',
          'backend_task_id',
          'backend_session_id',
          'held_result',
          'lease_holder',
          'lease_until',
          'creating_trace',
          'version',
        ]),
      );
      await rollbackBrokerDatabase(knex);
      expect(await knex.schema.hasTable(TASKS_TABLE)).toBe(false);
      await migrateBrokerDatabase(knex);
      expect(await knex.schema.hasTable(TASKS_TABLE)).toBe(true);
    },
    60_000,
  );
});
