/*
 * The final payload published with a task's end (docs/contracts/tasks-and-apps.md §2.10) never
 * names the backend's task id (§2.3): a backend's error about its task is shown with the broker's.
 */
import { withLegacyFinalPayload } from './finalPayload';
import type { ObservedChange } from './observeTaskState';
import type { StoredTask } from './TaskStore';

const row = (status: StoredTask['status']) =>
  ({
    taskId: 'jobs:broker-id',
    backendTaskId: 'backend-7f3a',
    principal: 'user:default/alice',
    server: 'jobs',
    serverIdentity: 'identity-1',
    status,
    version: 1,
  }) as unknown as StoredTask;

const ended = (status: StoredTask['status']): ObservedChange => ({
  before: row('working'),
  after: row(status),
});

describe('withLegacyFinalPayload', () => {
  it('publishes a failed task’s error with the broker id where the backend named its own', async () => {
    const change = await withLegacyFinalPayload(ended('failed'), async () => ({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32603,
        message: 'Task backend-7f3a has no result stored',
        data: { taskId: 'backend-7f3a' },
      },
    }));
    expect(change.finalPayload).toEqual({
      error: {
        code: -32603,
        message: 'Task jobs:broker-id has no result stored',
        data: { taskId: 'jobs:broker-id' },
      },
    });
  });

  it('publishes a completed task’s result, and nothing for a task the backend lost', async () => {
    const result = { content: [{ type: 'text', text: 'deployed' }] };
    const completed = await withLegacyFinalPayload(ended('completed'), async () => ({
      jsonrpc: '2.0',
      id: 1,
      result,
    }));
    expect(completed.finalPayload).toEqual({ result });
    const lost = await withLegacyFinalPayload(ended('failed'), async () => ({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
    }));
    expect(lost.finalPayload).toBeUndefined();
  });
});
