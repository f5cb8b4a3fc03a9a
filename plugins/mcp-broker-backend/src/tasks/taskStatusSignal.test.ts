/*
 * An ended task's signal (docs/contracts/tasks-and-apps.md §2.10 "Fan-out", the status mapping
 * of §2.12): its final payload inlined, the modern and the legacy status by the mapping. The
 * plugin tests show it through the fixtures (plugin.modernTaskNotifications.test.ts,
 * plugin.legacyClientModernTasks.test.ts); a legacy task ending with a JSON-RPC error has no
 * fixture tool, so it is shown here.
 */
import { legacyTaskStatusNotification, taskStatusSignalOf } from './taskStatusSignal';
import type { StoredTask } from './TaskStore';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A deploy task of `era`'s backend whose row says `status`. */
function row(status: StoredTask['status'], era: StoredTask['backendEra'] = 'legacy'): StoredTask {
  return {
    taskId: 'jobs:one',
    principal: 'user:default/alice',
    server: 'jobs',
    serverIdentity: 'identity-1',
    tool: 'deploy',
    credentialMode: 'broker',
    backendEra: era,
    status,
    createdAt: '2027-01-15T08:00:00Z',
    lastUpdatedAt: '2027-01-15T08:00:05Z',
    ttlMs: 60_000,
    recordedAt: 1,
    expiresAt: 60_001,
    version: 2,
  };
}

const toolError = { content: [{ type: 'text', text: 'no' }], isError: true };

describe('an ended task’s signal', () => {
  it('makes a legacy failed task with a tool error completed with that result (related-task removed)', () => {
    const signal = taskStatusSignalOf(row('failed'), 0, {
      result: { ...toolError, _meta: { [RELATED_TASK]: { taskId: 'backend-1' } } },
    });
    expect(signal.task).toMatchObject({ taskId: 'jobs:one', status: 'completed' });
    expect(signal.task.result).toMatchObject(toolError);
    expect(JSON.stringify(signal)).not.toContain('backend-1');
    expect(signal.legacyStatus).toBe('failed');
  });

  it('makes a task ended with a JSON-RPC error failed with that error', () => {
    const error = { code: -32603, message: 'deploy crashed' };
    const signal = taskStatusSignalOf(row('failed'), 0, { error });
    expect(signal.task).toMatchObject({ status: 'failed', error });
    expect(signal.task.result).toBeUndefined();
    expect(signal.legacyStatus).toBe('failed');
    // A 2025-11-25 stream is told the status only.
    expect(legacyTaskStatusNotification(signal).params).not.toHaveProperty('error');
  });

  it('tells a 2025-11-25 stream of a modern tool error as failed', () => {
    const signal = taskStatusSignalOf(row('completed', 'modern'), 0, { result: toolError });
    expect(signal.task.status).toBe('completed');
    expect(legacyTaskStatusNotification(signal).params.status).toBe('failed');
  });

  it('inlines nothing for an open task, nor without a payload', () => {
    expect(taskStatusSignalOf(row('working'), 0, { result: toolError }).task).not.toHaveProperty(
      'result',
    );
    const unread = taskStatusSignalOf(row('failed'), 0);
    expect(unread.task.status).toBe('failed');
    expect(unread.task).not.toHaveProperty('result');
  });
});
