/*
 * Observations of a task (docs/contracts/tasks-and-apps.md §2.10): only a change is written, by
 * one writer, and a stale observation never overwrites a newer state or reopens an ended task.
 */
import { MemoryTaskStore } from './MemoryTaskStore';
import { observeTaskState } from './observeTaskState';
import type { StoredTask, TaskState } from './TaskStore';

const NOW = 1_800_000_000_000;

const state = (extra: Partial<TaskState> = {}): TaskState => ({
  status: 'working',
  createdAt: '2027-01-15T08:00:00Z',
  lastUpdatedAt: '2027-01-15T08:00:00Z',
  ttlMs: 60_000,
  pollIntervalMs: 100,
  ...extra,
});

async function started(store: MemoryTaskStore): Promise<StoredTask> {
  const taskId = 'deploys:t1';
  await store.reserve(
    {
      taskId,
      principal: 'user:default/alice',
      server: 'deploys',
      serverIdentity: 'identity-1',
      tool: 'deploy',
      credentialMode: 'broker',
      backendEra: 'legacy',
    },
    { perPerson: 4, retained: 16 },
    NOW,
    NOW + 60_000,
  );
  return (await store.activate(taskId, { backendTaskId: 'b1' }, state()))!;
}

describe('observeTaskState', () => {
  it('writes a change once, and nothing when the state is the row’s', async () => {
    const store = new MemoryTaskStore();
    const task = await started(store);
    expect(await observeTaskState(store, task, state())).toBeUndefined();
    expect((await store.get(task.taskId))!.version).toBe(task.version);
    const done = state({ status: 'completed', lastUpdatedAt: '2027-01-15T08:05:00Z' });
    const change = await observeTaskState(store, task, done);
    expect(change?.before.status).toBe('working');
    expect(change?.after).toEqual(await store.get(task.taskId));
    expect(change?.after).toMatchObject({ status: 'completed', version: task.version + 1 });
    // The same observation by a second replica (its row is the old one): nothing more to write.
    expect(await observeTaskState(store, task, done)).toBeUndefined();
  });

  it('writes a newer observation after losing the race to an older change, never the reverse', async () => {
    const store = new MemoryTaskStore();
    const task = await started(store);
    const asking = state({ status: 'input_required', lastUpdatedAt: '2027-01-15T08:01:00Z' });
    expect(await observeTaskState(store, task, asking)).toBeDefined();
    // `task` is stale now; this newer observation still gets written (read again, one retry).
    const done = state({ status: 'completed', lastUpdatedAt: '2027-01-15T08:02:00Z' });
    expect((await observeTaskState(store, task, done))?.after.status).toBe('completed');
    const row = (await store.get(task.taskId))!;
    // An older observation, and one that would reopen the ended task, change nothing.
    expect(await observeTaskState(store, row, asking)).toBeUndefined();
    expect(
      await observeTaskState(store, row, state({ lastUpdatedAt: '2027-01-15T09:00:00Z' })),
    ).toBeUndefined();
    expect((await store.get(task.taskId))!.status).toBe('completed');
  });
});
